#if canImport(UserNotifications)
import Foundation
import HeraldDevice
import UserNotifications

/// A Notification Service Extension over `HeraldDevice`: subclass it as the extension's
/// principal class and override `makePlugin()`.
///
/// iOS starts it for each alert push with `"mutable-content": 1`. It hands the push to the
/// plugin and delivers the plugin's content, or the type's fallback content if iOS calls
/// `serviceExtensionTimeWillExpire()` first, so the user always sees something sensible.
open class HeraldNotificationService: UNNotificationServiceExtension, @unchecked Sendable {
    // Mutable state is guarded by `lock`: iOS calls in on its own thread, the handling task on another.
    private let lock = NSLock()
    private var contentHandler: ((UNNotificationContent) -> Void)?
    private var bestAttempt: UNMutableNotificationContent?
    private var push: IncomingPush?
    private var plugin: DevicePlugin?
    private var handling: Task<Void, Never>?

    /// The plugin for this push: the wallet opened from the App Group container and the shared
    /// keychain, a `URLSessionReplyTransport`, the container record and a coordinator.
    /// Return `nil` when the wallet cannot be set up (no mnemonic yet): the fallback is shown.
    open func makePlugin() -> DevicePlugin? { nil }

    open override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let plugin = makePlugin()
        // The plugin opens sealed pushes with its key; without one they show their type's fallback.
        let json = Self.json(from: request.content.userInfo)
        let push = plugin?.decode(json: json) ?? IncomingPush(json: json)
        lock.lock()
        self.contentHandler = contentHandler
        self.bestAttempt = (request.content.mutableCopy() as? UNMutableNotificationContent) ?? UNMutableNotificationContent()
        self.push = push
        self.plugin = plugin
        lock.unlock()

        guard let plugin else {
            deliver(DevicePlugin.defaultFallbackContent(for: push))
            return
        }
        // iOS calls in synchronously; this task is the one bridge into the plugin's async work.
        let task = Task { [weak self] in
            let result = await plugin.handle(push)
            self?.deliver(result.content)
        }
        lock.lock()
        handling = task
        lock.unlock()
    }

    open override func serviceExtensionTimeWillExpire() {
        lock.lock()
        let push = self.push
        let plugin = self.plugin
        handling?.cancel()
        lock.unlock()
        guard let push else { return }
        deliver(plugin?.fallbackContent(for: push) ?? DevicePlugin.defaultFallbackContent(for: push))
    }

    /// Hands the content to iOS once; later calls are ignored.
    func deliver(_ content: NotificationContent) {
        lock.lock()
        let handler = contentHandler
        let best = bestAttempt
        contentHandler = nil
        lock.unlock()
        guard let handler, let best else { return }
        content.apply(to: best)
        handler(best)
    }

    /// The `userInfo` as JSON; values JSON cannot hold are dropped, so decoding still sees the data keys.
    static func json(from userInfo: [AnyHashable: Any]) -> Data {
        var object: [String: Any] = [:]
        for (key, value) in userInfo {
            guard let key = key as? String, JSONSerialization.isValidJSONObject([key: value]) else { continue }
            object[key] = value
        }
        return (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{}".utf8)
    }
}

extension NotificationContent {
    /// Writes this content onto the notification iOS will show.
    func apply(to content: UNMutableNotificationContent) {
        content.title = title
        content.body = body
        if let category { content.categoryIdentifier = category }
        if let threadIdentifier { content.threadIdentifier = threadIdentifier }
        content.relevanceScore = relevanceScore
        switch interruptionLevel {
        case .passive: content.interruptionLevel = .passive
        case .active: content.interruptionLevel = .active
        case .timeSensitive: content.interruptionLevel = .timeSensitive
        }
    }
}
#endif
