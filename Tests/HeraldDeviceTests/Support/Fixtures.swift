import Foundation
import HeraldDevice
import HeraldWire

/// Builds pushes the way the NDS renders them, and plugins wired to test doubles.
enum Fixtures {
    /// An APNs `userInfo` with the Breez data keys beside `aps`.
    static func apnsPush(type: NotificationType, payload: [String: JSONValue], appData: String? = nil) -> Data {
        var object: [String: JSONValue] = [
            "aps": ["alert": ["title": "Herald", "body": "Wallet activity"], "mutable-content": 1],
            "notification_type": .string(type.rawValue),
            "notification_payload": .string((try? WireJSON.encodeString(payload)) ?? "{}"),
        ]
        if let appData { object["app_data"] = .string(appData) }
        return (try? WireJSON.encode(object)) ?? Data()
    }

    /// An FCM data map: every value a string.
    static func fcmPush(_ map: [String: String]) -> Data {
        (try? WireJSON.encode(map)) ?? Data()
    }

    static func plugin(
        wallet: any WalletService,
        budget: Duration = .seconds(5),
        reply: ReplyPolicy = ReplyPolicy(
            maxAttempts: 4, initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(100), attemptTimeout: .seconds(2)),
        wakeHandling: WakeHandling = .notifyOnly,
        swapPollInterval: Duration = .milliseconds(20),
        record: ContainerRecordStore? = nil,
        coordinator: (any AppExtensionCoordinator)? = nil,
        catalogue: ContentCatalogue = .default
    ) -> DevicePlugin {
        DevicePlugin(
            wallet: wallet,
            transport: URLSessionReplyTransport(),
            configuration: DevicePluginConfiguration(
                budget: budget, reply: reply, wakeHandling: wakeHandling, swapPollInterval: swapPollInterval
            ),
            catalogue: catalogue,
            record: record,
            coordinator: coordinator
        )
    }

    /// A fresh directory under the system's temporary folder.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-device-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
