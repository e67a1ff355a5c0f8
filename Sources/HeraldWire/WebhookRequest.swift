/// The body a swap service, LNURL service or LSP POSTs to the webhook:
/// `{"event": "swap.update", "data": {…}}` or `{"template": "lnurlpay_info", "data": {…}}`.
public struct WebhookRequest: Sendable, Hashable {
    public enum Form: String, Sendable, Hashable {
        case event
        case template
    }

    public var form: Form
    /// The event or template name as the caller sent it.
    public var name: String
    /// The `data` object, kept whole so unknown fields pass through to the device.
    public var data: [String: JSONValue]

    public init(form: Form, name: String, data: [String: JSONValue]) {
        self.form = form
        self.name = name
        self.data = data
    }

    /// The Breez event names that map to a different notification type.
    public static let swapUpdateEvent = "swap.update"
    public static let invoiceRequestEvent = "invoice.request"

    /// The `notification_type` the device sees for this request.
    public var notificationType: NotificationType {
        switch (form, name) {
        case (.event, Self.swapUpdateEvent): return .swapUpdated
        case (.event, Self.invoiceRequestEvent): return .invoiceRequest
        default: return NotificationType(rawValue: name)
        }
    }

    /// Checks the fields the known types need, so a malformed event is refused at intake
    /// rather than failing on the phone. Reads the decoded `data` directly: this runs for
    /// every webhook, and a decode round trip per event is measurable at 10,000 events/s.
    public func validate() throws(WebhookRequestError) {
        let required: [(String, FieldKind)]
        switch notificationType {
        case .swapUpdated: required = [("id", .string), ("status", .string)]
        case .invoiceRequest: required = [("offer", .string), ("invoiceRequest", .string)]
        case .lnurlpayInfo: required = [("callback_url", .string), ("reply_url", .string)]
        case .lnurlpayInvoice: required = [("amount", .amount), ("reply_url", .string)]
        case .lnurlpayVerify: required = [("payment_hash", .string), ("reply_url", .string)]
        case .paymentReceived: required = [("payment_hash", .string)]
        case .txConfirmed: required = [("tx_id", .string)]
        case .addressTxsConfirmed: required = [("address", .string)]
        case .nwcEvent: required = [("event", .nostrEvent)]
        default: return
        }
        for (key, kind) in required {
            guard let value = data[key] else { throw invalid("missing \"\(key)\"") }
            guard kind.accepts(value) else {
                throw invalid(kind == .nostrEvent ? "\"\(key)\" is not a NIP-01 event serialised as a JSON string" : "wrong type at \"\(key)\"")
            }
        }
        if notificationType == .lnurlpayInvoice, let verify = data["verify_url"], verify.stringValue == nil,
            verify != .null
        {
            throw invalid("wrong type at \"verify_url\"")
        }
    }

    enum FieldKind {
        case string
        /// Millisatoshis: a non-negative integer.
        case amount
        /// A whole NIP-01 event serialised as a JSON string, passed on byte for byte.
        case nostrEvent

        func accepts(_ value: JSONValue) -> Bool {
            switch self {
            case .string: return value.stringValue != nil
            case .nostrEvent: return value.stringValue.map(NostrEventShape.isEvent) ?? false
            case .amount:
                if case .int(let i) = value { return i >= 0 }
                return false
            }
        }
    }

    private func invalid(_ detail: String) -> WebhookRequestError {
        WebhookRequestError(
            message: "the data of \(form.rawValue) '\(name)' does not match its schema: \(detail)"
        )
    }

    /// The object the device receives as `notification_payload`.
    ///
    /// Everything passes through as sent except a BOLT12 invoice request, whose
    /// `invoiceRequest` the Breez plugin reads as `invoice_request`.
    public var devicePayload: [String: JSONValue] {
        guard notificationType == .invoiceRequest else { return data }
        var payload = data
        if let request = payload.removeValue(forKey: "invoiceRequest") {
            payload["invoice_request"] = request
        }
        return payload
    }

    /// The push data keys for this request.
    public func pushData(appData: String?) throws -> PushData {
        PushData(
            notificationType: notificationType,
            notificationPayload: {
                var writer = JSONWriter()
                writer.object(devicePayload)
                return String(decoding: writer.bytes, as: UTF8.self)
            }(),
            appData: appData
        )
    }
}

/// Why a webhook's data was refused: it does not match its event's or template's schema.
public struct WebhookRequestError: ErrorCodeProviding, Sendable, Hashable {
    public var code: ErrorCode { .invalidData }
    public var message: String
    public init(message: String) {
        self.message = message
    }
}

/// Why `WebhookRequest(parsing:)` refused a body.
public enum WebhookBodyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The body is not JSON at all.
    case invalidJSON(String)
    /// The body is JSON, but not an object.
    case notAnObject
    /// The object is not a webhook: no single string name, or `data` not an object.
    case unknownShape(String)

    public var description: String {
        switch self {
        case .invalidJSON(let reason), .unknownShape(let reason): return reason
        case .notAnObject: return "the body is not a JSON object"
        }
    }
}

extension WebhookRequest {
    /// Parses a webhook body with `JSONParser`, accepting exactly the bodies the `Codable`
    /// conformance accepts from valid JSON, with the same result, at a fraction of the cost.
    ///
    /// The whole body must be strict JSON, ignored members included, where `JSONDecoder`
    /// only scans members it is not asked for.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(WebhookBodyError) {
        let body: JSONValue
        do {
            body = try JSONParser.parse(bytes)
        } catch {
            throw .invalidJSON(error.description)
        }
        guard case .object(let members) = body else { throw .notAnObject }

        // `decodeIfPresent` takes null for absent, and anything else but a string for an error.
        func optionalString(_ key: String) throws(WebhookBodyError) -> String? {
            switch members[key] {
            case nil, .null?: return nil
            case .string(let s)?: return s
            default: throw .unknownShape("\"\(key)\" is not a string")
            }
        }
        (form, name) = try Self.named(event: optionalString("event"), template: optionalString("template"))
        switch members["data"] {
        case nil, .null?: data = [:]
        case .object(let object)?: data = object
        default: throw .unknownShape("\"data\" is not an object")
        }
    }
}

extension WebhookRequest {
    /// The form and name given by the `event` and `template` members: exactly one, 1 to 128
    /// characters long.
    static func named(event: String?, template: String?) throws(WebhookBodyError) -> (Form, String) {
        let named: (Form, String)
        switch (event, template) {
        case (let name?, nil): named = (.event, name)
        case (nil, let name?): named = (.template, name)
        default: throw .unknownShape("exactly one of \"event\" or \"template\" is required")
        }
        guard !named.1.isEmpty, named.1.count <= 128 else {
            throw .unknownShape("the event or template name must be 1 to 128 characters")
        }
        return named
    }
}

extension WebhookRequest: Codable {
    enum CodingKeys: String, CodingKey {
        case event, template, data
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let event = try c.decodeIfPresent(String.self, forKey: .event)
        let template = try c.decodeIfPresent(String.self, forKey: .template)
        do {
            (form, name) = try Self.named(event: event, template: template)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(error)"))
        }
        data = try c.decodeIfPresent([String: JSONValue].self, forKey: .data) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch form {
        case .event: try c.encode(name, forKey: .event)
        case .template: try c.encode(name, forKey: .template)
        }
        try c.encode(data, forKey: .data)
    }
}
