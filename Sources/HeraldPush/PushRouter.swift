import HeraldWire
import Logging

/// One provider per platform; routes each message to the provider of its target's platform.
public struct PushRouter: Sendable {
    public let ios: (any PushProvider)?
    public let android: (any PushProvider)?

    public init(ios: (any PushProvider)?, android: (any PushProvider)?) {
        self.ios = ios
        self.android = android
    }

    public func provider(for platform: Platform) -> (any PushProvider)? {
        switch platform {
        case .ios: return ios
        case .android: return android
        }
    }

    /// The provider's name for metrics, or `none`.
    public func name(for platform: Platform) -> String {
        provider(for: platform)?.name ?? "none"
    }

    public func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        guard let provider = provider(for: target.platform) else {
            throw PushValidationError(
                code: "platform_not_configured",
                message: "no push provider is configured for \(target.platform.rawValue)"
            )
        }
        try provider.validate(message, for: target)
    }

    public func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        guard let provider = provider(for: target.platform) else {
            return PushOutcome(kind: .permanent, reason: "platform_not_configured")
        }
        return await provider.send(message, to: target, logger: logger)
    }
}
