import Foundation
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird

/// The wallet-backend API: user sessions and events, each behind an API key with
/// its scope. The backend's login handler makes one call, its ledger one call per event.
struct BackendRoutes: Sendable {
    let keys: any APIKeyStore
    let sessions: SessionRoutes
    let events: BackendEventRoutes

    init(
        delivery: PushDelivery,
        store: some APIKeyStore & SessionStore,
        providers: PushRouter,
        settings: ServerSettings,
        now: @escaping @Sendable () -> Date
    ) {
        keys = store
        sessions = SessionRoutes(sessions: store, providers: providers, settings: settings, now: now)
        events = BackendEventRoutes(
            fanOut: BackendFanOut(delivery: delivery, sessions: store, providers: providers, now: now),
            sessions: store,
            now: now
        )
    }

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        // Two groups on one path: the middleware of each guards only the routes added through it.
        sessions.register(on: router.group("users").add(middleware: APIKeyAuthenticator(keys: keys, scope: .sessions)))
        events.register(on: router.group("users").add(middleware: APIKeyAuthenticator(keys: keys, scope: .events)))
    }
}

/// The two ids of the backend's paths, each with the code that refuses it.
enum BackendIDParameter: String {
    case userID = "user_id"
    case sessionID = "session_id"

    var invalid: ErrorCode {
        switch self {
        case .userID: .invalidUserID
        case .sessionID: .invalidSessionID
        }
    }
}

/// A user or session id from the path: 1 to 128 bytes of letters, digits and `. _ ~ @ + -`,
/// so ids are safe in URLs, logs and (never containing `:`) in composed idempotency keys.
func backendID(_ parameter: BackendIDParameter, in context: HeraldRequestContext) throws -> String {
    guard let value = context.parameters.get(parameter.rawValue), BackendIDRules.isValid(value) else {
        throw APIError(parameter.invalid, "\(parameter.rawValue) must be 1 to 128 characters of letters, digits and . _ ~ @ + -")
    }
    return value
}

enum BackendIDRules {
    static func isValid(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 128
            && value.utf8.allSatisfy { byte in
                byte.isASCIILetterOrDigit || [0x2E, 0x5F, 0x7E, 0x40, 0x2B, 0x2D].contains(byte)
            }
    }
}
