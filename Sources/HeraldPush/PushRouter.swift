import HeraldWire
import Logging

/// The provider for each platform, chosen by the target: APNs (or local) for iOS, FCM (or
/// local) for Android. A platform without a provider refuses its messages.
public struct PushRouter: PushProvider {
    public var name: String { "router" }

    public let ios: (any PushProvider)?
    public let android: (any PushProvider)?

    public init(ios: (any PushProvider)?, android: (any PushProvider)?) {
        self.ios = ios
        self.android = android
    }

    /// One provider for both platforms (the local development provider).
    public init(both provider: any PushProvider) {
        self.init(ios: provider, android: provider)
    }

    public func provider(for platform: Platform) -> (any PushProvider)? {
        switch platform {
        case .ios: ios
        case .android: android
        }
    }

    public func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        guard let provider = provider(for: target.platform) else {
            throw PushValidationError(
                .platformNotConfigured,
                message: "no push provider is configured for \(target.platform.rawValue)"
            )
        }
        try provider.validate(message, for: target)
    }

    public func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        guard let provider = provider(for: target.platform) else {
            return PushOutcome(kind: .permanent, reason: PushValidationError.Reason.platformNotConfigured.rawValue)
        }
        return await provider.send(message, to: target, logger: logger)
    }
}
