import Foundation

/// What APNs keeps for a device it cannot reach, by Apple's rules ("Sending notification
/// requests to APNs"): one notification per app, and only one whose `apns-expiration` is
/// non-zero and still in the future; `0` means "now or never". A later storable push replaces
/// the held one (Apple: "in most cases the latest"). The held push is handed over when the
/// device comes back, unless it expired meanwhile.
///
/// A value type so a fleet simulation can apply the same rule to pushes it sees without a
/// server; ``MockAPNsDevices`` applies it per token inside the look-alike.
public struct APNsOfflineSlot<Push: Sendable>: Sendable {
    public private(set) var held: (push: Push, expiresAt: Date)?

    public init() {}

    /// Whether APNs stores a push with this `apns-expiration` header (absent reads as 0).
    public static func isStorable(expiration header: String?, now: Date) -> Bool {
        guard let header, let seconds = Int64(header), seconds != 0 else { return false }
        return Date(timeIntervalSince1970: TimeInterval(seconds)) > now
    }

    /// A push APNs accepted while the device was unreachable: kept (replacing any held one) when
    /// storable, dropped otherwise. Returns whether it was kept.
    @discardableResult
    public mutating func arrive(_ push: Push, expiration header: String?, now: Date) -> Bool {
        guard Self.isStorable(expiration: header, now: now), let seconds = header.flatMap({ Int64($0) }) else { return false }
        held = (push, Date(timeIntervalSince1970: TimeInterval(seconds)))
        return true
    }

    /// The device is back: the held push, if it has not expired; the slot is emptied either way.
    public mutating func handOver(now: Date) -> Push? {
        defer { held = nil }
        guard let held, held.expiresAt > now else { return nil }
        return held.push
    }
}

/// The devices behind the APNs look-alike: online (every accepted push is delivered at once)
/// unless a test takes one offline, when APNs holds at most one push for it
/// (``APNsOfflineSlot``) until it comes back.
public actor MockAPNsDevices {
    private var offline: [String: APNsOfflineSlot<MockAPNsRequest>] = [:]
    private var delivered: [String: [MockAPNsRequest]] = [:]
    private let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The device with this token stops being reachable (a lift, a tunnel, a weak cell).
    public func goOffline(_ token: String) {
        if offline[token] == nil { offline[token] = APNsOfflineSlot() }
    }

    /// The device is reachable again and receives what APNs held for it; returns that push.
    @discardableResult
    public func comeOnline(_ token: String) -> MockAPNsRequest? {
        guard var slot = offline.removeValue(forKey: token) else { return nil }
        let push = slot.handOver(now: now())
        if let push { delivered[token, default: []].append(push) }
        return push
    }

    /// Every push the device received, in order.
    public func received(by token: String) -> [MockAPNsRequest] {
        delivered[token] ?? []
    }

    /// A push APNs accepted (200) for `request.deviceToken`.
    func accepted(_ request: MockAPNsRequest) {
        let token = request.deviceToken
        if var slot = offline[token] {
            slot.arrive(request, expiration: request.headers["apns-expiration"], now: now())
            offline[token] = slot
        } else {
            delivered[token, default: []].append(request)
        }
    }
}
