import Foundation
import Synchronization

/// A device registered with a running server, and what it can read back: the pushes the local
/// development provider recorded for it.
struct RegisteredDevice: Sendable {
    var id: String
    var secret: String
    var alias: String
    var platform: String

    static func register(port: Int, platform: String = "android", token: String, app: String? = nil) async throws
        -> RegisteredDevice
    {
        let appField = app.map { #","app":"\#($0)""# } ?? ""
        let body = #"{"platform":"\#(platform)","push_token":"\#(token)"\#(appField)}"#
        let exchange = await RawHTTP.exchange(port: port, request: .post("/api/v1/devices", body: Array(body.utf8)), timeout: .seconds(10))
        guard exchange.statuses.first == 201, let text = exchange.bodies.first,
            let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let id = json["device_id"] as? String, let secret = json["device_secret"] as? String,
            let alias = json["alias"] as? String
        else { throw HostileFailure("registration failed: \(exchange)") }
        return RegisteredDevice(id: id, secret: secret, alias: alias, platform: platform)
    }

    var webhookPath: String { "/api/v1/notify?platform=\(platform)&token=\(alias)" }

    /// The `data.id` of every `swap_updated` push delivered to this device so far, with repeats.
    func deliveredSwapIDs(port: Int) async throws -> [String] {
        var ids: [String] = []
        var after: Int64 = 0
        while true {
            let exchange = await RawHTTP.exchange(
                port: port,
                request: .get("/api/v1/devices/\(id)/pushes?after=\(after)", headers: ["Authorization: Bearer \(secret)"]),
                timeout: .seconds(10)
            )
            guard exchange.statuses.first == 200, let text = exchange.bodies.first,
                let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                let pushes = json["pushes"] as? [[String: Any]], let next = json["next"] as? Int
            else { throw HostileFailure("push feed failed: \(exchange)") }
            for push in pushes {
                guard let payload = push["payload"] as? [String: Any],
                    let data = (payload["data"] as? [String: Any]) ?? (payload as [String: Any]?),
                    let inner = data["notification_payload"] as? String,
                    let swap = try JSONSerialization.jsonObject(with: Data(inner.utf8)) as? [String: Any],
                    let swapID = swap["id"] as? String
                else { continue }
                ids.append(swapID)
            }
            if pushes.isEmpty { return ids }
            after = Int64(next)
        }
    }
}

struct HostileFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A webhook body whose push carries `id`, so deliveries can be matched to acknowledgements.
func swapWebhook(id: String) -> [UInt8] {
    Array(#"{"event":"swap.update","data":{"id":"\#(id)","status":"transaction.mempool"}}"#.utf8)
}

/// Runs `work` for each element with at most `width` at once.
func forEach<T: Sendable>(_ items: [T], width: Int, _ work: @escaping @Sendable (T) async -> Void) async {
    await withTaskGroup(of: Void.self) { group in
        var iterator = items.makeIterator()
        for _ in 0..<width {
            guard let item = iterator.next() else { break }
            group.addTask { await work(item) }
        }
        while await group.next() != nil {
            guard let item = iterator.next() else { continue }
            group.addTask { await work(item) }
        }
    }
}

/// A value shared by concurrent tasks of a test.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func get() -> Value { mutex.withLock { $0 } }
    func update<R>(_ change: (inout Value) -> R) -> R { mutex.withLock { change(&$0) } }
}
