import Foundation
import HeraldWire

/// FCM's success body: `{"name": "projects/p/messages/0:123…"}`.
struct FCMSendResponse: Codable, Sendable {
    var name: String
}

/// FCM's error body, a google.rpc.Status:
/// `{"error":{"code":404,"message":"…","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`.
struct FCMErrorResponse: Codable, Sendable {
    struct Status: Codable, Sendable {
        var code: Int?
        var message: String?
        var status: String?
        var details: [Detail]?
    }

    struct Detail: Codable, Sendable {
        var type: String?
        var errorCode: String?
        enum CodingKeys: String, CodingKey {
            case type = "@type"
            case errorCode
        }
    }

    var error: Status

    /// The FCM `errorCode` from the `FcmError` detail, the most specific reason there is.
    var fcmErrorCode: String? {
        error.details?.first { $0.type?.hasSuffix("google.firebase.fcm.v1.FcmError") == true && $0.errorCode != nil }?
            .errorCode
    }
}

/// What an FCM answer means for the outbox, following Firebase's "FCM error codes" table.
enum FCMResponse {
    struct Mapped: Sendable {
        var outcome: PushOutcome
        /// The access token was refused: forget it before the retry.
        var dropAccessToken: Bool
    }

    /// - 200: delivered, with the message `name`.
    /// - 404 or `UNREGISTERED`: the token is dead.
    /// - 400 `INVALID_ARGUMENT`: permanent, except when the message says the *registration
    ///   token* is invalid (FCM reports a malformed or foreign token this way, with no more
    ///   specific code); then token-dead, as the Admin SDKs' `invalid-registration-token` does.
    /// - 401 / `UNAUTHENTICATED`: drop the access token, retry.
    /// - 403 (`SENDER_ID_MISMATCH`, `PERMISSION_DENIED`), `THIRD_PARTY_AUTH_ERROR`: permanent.
    /// - 429 `QUOTA_EXCEEDED`, 500 `INTERNAL`, 503 `UNAVAILABLE`, any 5xx: retry, honouring
    ///   `Retry-After`.
    static func map(status: Int, body: Data, retryAfter: Duration?) -> Mapped {
        if status == 200 {
            let name = (try? WireJSON.decode(FCMSendResponse.self, from: body))?.name
            return Mapped(outcome: .delivered(id: name), dropAccessToken: false)
        }
        let error = try? WireJSON.decode(FCMErrorResponse.self, from: body)
        let errorCode = error?.fcmErrorCode
        let reason = errorCode ?? error?.error.status ?? "HTTP_\(status)"
        func mapped(_ kind: PushOutcome.Kind, retryAfter: Duration? = nil, drop: Bool = false) -> Mapped {
            Mapped(
                outcome: PushOutcome(kind: kind, reason: reason, status: status, retryAfter: retryAfter),
                dropAccessToken: drop
            )
        }

        if status == 404 || errorCode == "UNREGISTERED" {
            return mapped(.tokenDead)
        }
        if status == 401 || errorCode == "UNAUTHENTICATED" || error?.error.status == "UNAUTHENTICATED" {
            return mapped(.retry, drop: true)
        }
        if errorCode == "THIRD_PARTY_AUTH_ERROR" || errorCode == "SENDER_ID_MISMATCH" {
            return mapped(.permanent)
        }
        switch status {
        case 400:
            let message = error?.error.message?.lowercased() ?? ""
            let aboutToken = message.contains("registration token")
            return mapped(aboutToken ? .tokenDead : .permanent)
        case 429, 500...599:
            return mapped(.retry, retryAfter: retryAfter)
        default:
            return mapped(.permanent)
        }
    }
}
