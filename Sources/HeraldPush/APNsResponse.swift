import Foundation

/// APNs' error body: `{"reason": "BadDeviceToken"}`, with `timestamp` (ms) on 410.
struct APNsErrorBody: Codable, Sendable, Hashable {
    var reason: String
    var timestamp: Int64?
}

/// What an APNs answer means for the outbox, following Apple's "Handling notification
/// responses from APNs".
enum APNsResponse {
    /// The reasons that say the provider token itself was refused: drop it, sign a new one,
    /// try again.
    static let providerTokenReasons: Set<String> = ["ExpiredProviderToken", "InvalidProviderToken"]

    /// - 200: delivered, with `apns-id`.
    /// - 410 (`Unregistered`, `ExpiredToken`) and 400 `BadDeviceToken`: the token is dead.
    /// - 400 `DeviceTokenNotForTopic`: **permanent**, not token-dead. The token is fine for
    ///   another app; the fault is ours (topic or key for the wrong app), and marking tokens dead
    ///   would destroy every registration before an operator could fix the configuration.
    /// - other 400, 404, 405, 413: permanent (the request is wrong and stays wrong).
    /// - 403 `ExpiredProviderToken` / `InvalidProviderToken`: retry after a new token. An
    ///   invalid key keeps failing this way; the outbox's attempt limit ends it.
    /// - other 403 (`BadCertificate`, `MissingProviderToken` …): permanent.
    /// - 429 (`TooManyRequests`, `TooManyProviderTokenUpdates`), 500, 503 and any other 5xx:
    ///   retry, honouring `Retry-After`.
    static func outcome(status: Int, reason: String?, retryAfter: Duration?, apnsID: String?) -> PushOutcome {
        func outcome(_ kind: PushOutcome.Kind, retryAfter: Duration? = nil) -> PushOutcome {
            PushOutcome(kind: kind, reason: reason, status: status, retryAfter: retryAfter)
        }
        switch status {
        case 200:
            return .delivered(id: apnsID)
        case 410:
            return outcome(.tokenDead)
        case 400 where reason == "BadDeviceToken":
            return outcome(.tokenDead)
        case 403 where reason.map(providerTokenReasons.contains) == true:
            return outcome(.retry)
        case 429, 500...599:
            return outcome(.retry, retryAfter: retryAfter)
        default:
            return outcome(.permanent)
        }
    }
}
