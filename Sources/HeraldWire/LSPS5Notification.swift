import Foundation

/// A webhook notification method of LSPS5 (bLIP-55).
public enum LSPS5Method: Sendable, Hashable {
    /// The webhook was just (re)registered; sent to that webhook alone.
    case webhookRegistered
    /// One or more payments wait for the client.
    case paymentIncoming
    /// An HTLC or other time-bound contract is close to forcing a channel closure.
    case expirySoon
    /// The LSP wants some of its liquidity back (closing or splicing out).
    case liquidityManagementRequest
    /// One or more onion messages wait for the client.
    case onionMessageIncoming
    /// A method this version does not know: kept by name, as the spec asks services to ignore it.
    case other(String)

    public init(name: String) {
        switch name {
        case "lsps5.webhook_registered": self = .webhookRegistered
        case "lsps5.payment_incoming": self = .paymentIncoming
        case "lsps5.expiry_soon": self = .expirySoon
        case "lsps5.liquidity_management_request": self = .liquidityManagementRequest
        case "lsps5.onion_message_incoming": self = .onionMessageIncoming
        default: self = .other(name)
        }
    }

    /// The JSON-RPC `method` string.
    public var name: String {
        switch self {
        case .webhookRegistered: "lsps5.webhook_registered"
        case .paymentIncoming: "lsps5.payment_incoming"
        case .expirySoon: "lsps5.expiry_soon"
        case .liquidityManagementRequest: "lsps5.liquidity_management_request"
        case .onionMessageIncoming: "lsps5.onion_message_incoming"
        case .other(let name): name
        }
    }
}

/// Why a webhook body is not an LSPS5 notification.
public struct LSPS5NotificationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}

/// The JSON-RPC 2.0 notification object an LSP posts to a webhook:
/// `{"jsonrpc":"2.0","method":"lsps5.…","params":{…}}`.
public struct LSPS5Notification: Sendable, Hashable {
    public var method: LSPS5Method
    /// The by-name parameters, unknown ones included (the spec asks services to ignore them).
    public var params: [String: JSONValue]

    public init(method: LSPS5Method, params: [String: JSONValue] = [:]) {
        self.method = method
        self.params = params
    }

    /// `lsps5.expiry_soon` for a contract that forces a closure at block `timeout`.
    public static func expirySoon(timeout: UInt32) -> LSPS5Notification {
        LSPS5Notification(method: .expirySoon, params: ["timeout": .int(Int64(timeout))])
    }

    /// `params.timeout` of `lsps5.expiry_soon`: the block height at which the LSP must close.
    public var timeout: UInt32? {
        guard let value = params["timeout"], case .int(let height) = value else { return nil }
        return UInt32(exactly: height)
    }

    /// Reads a webhook body. It must be a JSON-RPC 2.0 notification (no `id`) with a string
    /// `method` and by-name `params` (an absent `params` reads as `{}`, as JSON-RPC allows);
    /// `lsps5.expiry_soon` must carry a block height in `timeout`.
    public init(parsing body: some ContiguousBytes) throws(LSPS5NotificationError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw LSPS5NotificationError(reason: "not JSON: \(error)")
        }
        guard let object = value.objectValue else {
            throw LSPS5NotificationError(reason: "not a JSON object")
        }
        guard object["jsonrpc"] == .string("2.0") else {
            throw LSPS5NotificationError(reason: "jsonrpc is not \"2.0\"")
        }
        guard object["id"] == nil else {
            throw LSPS5NotificationError(reason: "a request with an id, not a notification")
        }
        guard let name = object["method"]?.stringValue else {
            throw LSPS5NotificationError(reason: "method is missing or not a string")
        }
        let params: [String: JSONValue]
        switch object["params"] {
        case nil: params = [:]
        case .object(let members)?: params = members
        case _?: throw LSPS5NotificationError(reason: "params is not an object")
        }
        self.init(method: LSPS5Method(name: name), params: params)
        if method == .expirySoon, timeout == nil {
            throw LSPS5NotificationError(reason: "lsps5.expiry_soon without a block height in timeout")
        }
    }

    /// The body as an LSP sends it: compact JSON, keys sorted (`jsonrpc`, `method`, `params`).
    public var body: [UInt8] {
        var writer = JSONWriter(capacity: 96)
        writer.beginObject()
        writer.key("jsonrpc")
        writer.string("2.0")
        writer.key("method")
        writer.string(method.name)
        writer.key("params")
        writer.object(params)
        writer.endObject()
        return writer.bytes
    }
}
