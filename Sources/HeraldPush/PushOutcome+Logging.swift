import Logging

extension Logger {
    /// This logger with the push service and the redacted token as metadata. Providers build it
    /// only where they log: every metadata change makes the standard handler re-render all of
    /// it, a measurable share of a send when done for each one.
    func forPush(service: String, to target: PushTarget) -> Logger {
        var scoped = self
        scoped[metadataKey: "push.service"] = .string(service)
        scoped[metadataKey: "push.token"] = .string(target.redactedToken)
        return scoped
    }
}

extension PushOutcome {
    /// A message refused before it was sent: it can never be sent, so it is dead-lettered with
    /// the validation code as its reason.
    static func refused(_ error: any Error, service: String, logger: Logger) -> PushOutcome {
        guard let error = error as? PushValidationError else {
            logger.warning(
                "push refused before sending",
                metadata: ["push.service": "\(service)", "error.type": "\(type(of: error))"]
            )
            return PushOutcome(kind: .permanent, reason: "invalid_message")
        }
        logger.warning(
            "push refused before sending",
            metadata: ["push.service": "\(service)", "error": "\(error.code.rawValue): \(error.message)"]
        )
        return PushOutcome(kind: .permanent, reason: error.code.rawValue)
    }
}

extension PushOutcome {
    /// Logs what the push service answered. A permanent failure is a configuration or payload
    /// fault worth an operator's eye; everything else is routine for the outbox.
    func log(logger: Logger) {
        let metadata: Logger.Metadata = [
            "push.outcome": "\(kind.rawValue)",
            "push.status": "\(status.map(String.init) ?? "-")",
            "push.reason": "\(reason ?? "-")",
        ]
        if kind == .permanent {
            logger.warning("push failed permanently", metadata: metadata)
        } else {
            logger.debug("push answered", metadata: metadata)
        }
    }
}
