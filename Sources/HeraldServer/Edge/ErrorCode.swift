import HTTPTypes

/// Every `error` code Herald's API answers, each with the one status it comes with.
///
/// The one list: refusals are made from it (``APIError``), and `scripts/openapi.py` reads this
/// file for the document's `ErrorCode` schema and checks every operation's codes against it.
/// Keep one `case` per line here and one `case .name: .status` per line below: that is what it reads.
public enum ErrorCode: String, CaseIterable, Sendable {
    case aliasRequired = "alias_required"
    case badRequest = "bad_request"
    case expired
    case invalidAmount = "invalid_amount"
    case invalidCollapseKey = "invalid_collapse_key"
    case invalidCursor = "invalid_cursor"
    case invalidDevice = "invalid_device"
    case bip353NotConfigured = "bip353_not_configured"
    case invalidFallbackAfter = "invalid_fallback_after"
    case invalidIdempotencyKey = "invalid_idempotency_key"
    case invalidIdentities = "invalid_identities"
    case invalidIdentity = "invalid_identity"
    case invalidJSON = "invalid_json"
    case invalidKind = "invalid_kind"
    case invalidOffer = "invalid_offer"
    case offerTooLong = "offer_too_long"
    case invalidLimit = "invalid_limit"
    case invalidLSPNodeID = "invalid_lsp_node_id"
    case invalidNotification = "invalid_notification"
    case invalidPaymentHash = "invalid_payment_hash"
    case invalidPreimage = "invalid_preimage"
    case invalidPubkey = "invalid_pubkey"
    case invalidReason = "invalid_reason"
    case invalidRelays = "invalid_relays"
    case invalidRequest = "invalid_request"
    case invalidSealKey = "invalid_seal_key"
    case invalidSessionID = "invalid_session_id"
    case invalidSubscription = "invalid_subscription"
    case invalidToken = "invalid_token"
    case invalidTTL = "invalid_ttl"
    case invalidUsername = "invalid_username"
    case invalidUserID = "invalid_user_id"
    case invalidWebhookURL = "invalid_webhook_url"
    case malformedRequest = "malformed_request"
    case missingPlatform = "missing_platform"
    case missingRecipient = "missing_recipient"
    case missingTimestamp = "missing_timestamp"
    case missingToken = "missing_token"
    case platformNotConfigured = "platform_not_configured"
    case privateEndpoint = "private_endpoint"
    case privateRelay = "private_relay"
    case unresolvableRelay = "unresolvable_relay"
    case tooManyRelays = "too_many_relays"
    case privateWebhookURL = "private_webhook_url"
    case unknownApp = "unknown_app"
    case unknownBodyShape = "unknown_body_shape"
    case unknownPlatform = "unknown_platform"
    case unresolvableEndpoint = "unresolvable_endpoint"
    case invalidProof = "invalid_proof"
    case invalidSignature = "invalid_signature"
    case missingProof = "missing_proof"
    case staleTime = "stale_time"
    case staleTimestamp = "stale_timestamp"
    case unauthorized
    case deviceUnconfirmed = "device_unconfirmed"
    case forbidden
    case invalidCode = "invalid_code"
    case tokenRegisteredElsewhere = "token_registered_elsewhere"
    case deadLetterNotFound = "dead_letter_not_found"
    case noUsername = "no_username"
    case notConfigured = "not_configured"
    case notFound = "not_found"
    case sessionNotFound = "session_not_found"
    case unknownDevice = "unknown_device"
    case unknownLiveActivity = "unknown_live_activity"
    case unknownReply = "unknown_reply"
    case unknownToken = "unknown_token"
    case unknownWake = "unknown_wake"
    case unknownZap = "unknown_zap"
    case requestTimeout = "request_timeout"
    case alreadyAnswered = "already_answered"
    case replayed
    case installTaken = "install_taken"
    case proofReplayed = "proof_replayed"
    case tooManyDevices = "too_many_devices"
    case tokenDead = "token_dead"
    case usernameTaken = "username_taken"
    case deviceDeleted = "device_deleted"
    case replyExpired = "reply_expired"
    case tokenUnregistered = "token_unregistered"
    case bodyTooLarge = "body_too_large"
    case replyTooLarge = "reply_too_large"
    case wakePayloadTooLarge = "wake_payload_too_large"
    case idempotencyKeyReused = "idempotency_key_reused"
    case invalidBody = "invalid_body"
    case invalidData = "invalid_data"
    case invalidMessage = "invalid_message"
    case payloadTooLarge = "payload_too_large"
    case pushTokenRequired = "push_token_required"
    case unknownTopic = "unknown_topic"
    case unsupportedTemplate = "unsupported_template"
    case rateLimited = "rate_limited"
    case targetRateLimited = "target_rate_limited"
    case tooManyHeldRequests = "too_many_held_requests"
    case tooManyRegistrations = "too_many_registrations"
    case internalError = "internal"
    case replyTimeout = "reply_timeout"
    case overloaded
    case shuttingDown = "shutting_down"
    case storeUnavailable = "store_unavailable"
    case tooManyConnections = "too_many_connections"
    case tooManyStreams = "too_many_streams"

    /// The status every answer with this code has.
    public var status: HTTPResponse.Status {
        switch self {
        case .aliasRequired: .badRequest
        case .badRequest: .badRequest
        case .expired: .badRequest
        case .invalidAmount: .badRequest
        case .invalidCollapseKey: .badRequest
        case .invalidCursor: .badRequest
        case .invalidDevice: .badRequest
        case .bip353NotConfigured: .badRequest
        case .invalidFallbackAfter: .badRequest
        case .invalidIdempotencyKey: .badRequest
        case .invalidIdentities: .badRequest
        case .invalidIdentity: .badRequest
        case .invalidJSON: .badRequest
        case .invalidKind: .badRequest
        case .invalidOffer: .badRequest
        case .offerTooLong: .badRequest
        case .invalidLimit: .badRequest
        case .invalidLSPNodeID: .badRequest
        case .invalidNotification: .badRequest
        case .invalidPaymentHash: .badRequest
        case .invalidPreimage: .badRequest
        case .invalidPubkey: .badRequest
        case .invalidReason: .badRequest
        case .invalidRelays: .badRequest
        case .invalidRequest: .badRequest
        case .invalidSealKey: .badRequest
        case .invalidSessionID: .badRequest
        case .invalidSubscription: .badRequest
        case .invalidToken: .badRequest
        case .invalidTTL: .badRequest
        case .invalidUsername: .badRequest
        case .invalidUserID: .badRequest
        case .invalidWebhookURL: .badRequest
        case .malformedRequest: .badRequest
        case .missingPlatform: .badRequest
        case .missingRecipient: .badRequest
        case .missingTimestamp: .badRequest
        case .missingToken: .badRequest
        case .platformNotConfigured: .badRequest
        case .privateEndpoint: .badRequest
        case .privateRelay: .badRequest
        case .unresolvableRelay: .badRequest
        case .tooManyRelays: .badRequest
        case .privateWebhookURL: .badRequest
        case .unknownApp: .badRequest
        case .unknownBodyShape: .badRequest
        case .unknownPlatform: .badRequest
        case .unresolvableEndpoint: .badRequest
        case .invalidProof: .unauthorized
        case .invalidSignature: .unauthorized
        case .missingProof: .unauthorized
        case .staleTime: .unauthorized
        case .staleTimestamp: .unauthorized
        case .unauthorized: .unauthorized
        case .deviceUnconfirmed: .forbidden
        case .forbidden: .forbidden
        case .invalidCode: .forbidden
        case .tokenRegisteredElsewhere: .forbidden
        case .deadLetterNotFound: .notFound
        case .noUsername: .notFound
        case .notConfigured: .notFound
        case .notFound: .notFound
        case .sessionNotFound: .notFound
        case .unknownLiveActivity: .notFound
        case .unknownDevice: .notFound
        case .unknownReply: .notFound
        case .unknownToken: .notFound
        case .unknownWake: .notFound
        case .unknownZap: .notFound
        case .requestTimeout: .requestTimeout
        case .alreadyAnswered: .conflict
        case .replayed: .conflict
        case .installTaken: .conflict
        case .proofReplayed: .conflict
        case .tooManyDevices: .conflict
        case .tokenDead: .conflict
        case .usernameTaken: .conflict
        case .deviceDeleted: .gone
        case .replyExpired: .gone
        case .tokenUnregistered: .gone
        case .bodyTooLarge: .contentTooLarge
        case .replyTooLarge: .contentTooLarge
        case .wakePayloadTooLarge: .contentTooLarge
        case .idempotencyKeyReused: .unprocessableContent
        case .invalidBody: .unprocessableContent
        case .invalidData: .unprocessableContent
        case .invalidMessage: .unprocessableContent
        case .payloadTooLarge: .unprocessableContent
        case .pushTokenRequired: .unprocessableContent
        case .unknownTopic: .unprocessableContent
        case .unsupportedTemplate: .unprocessableContent
        case .rateLimited: .tooManyRequests
        case .targetRateLimited: .tooManyRequests
        case .tooManyHeldRequests: .tooManyRequests
        case .tooManyRegistrations: .tooManyRequests
        case .internalError: .internalServerError
        case .replyTimeout: .gatewayTimeout
        case .overloaded: .serviceUnavailable
        case .shuttingDown: .serviceUnavailable
        case .storeUnavailable: .serviceUnavailable
        case .tooManyConnections: .serviceUnavailable
        case .tooManyStreams: .serviceUnavailable
        }
    }
}
