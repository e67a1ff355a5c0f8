import HeraldWire

/// What LSPS5 notifications count.
extension HeraldMetrics {
    /// An LSPS5 notification taken, by method (the five of bLIP-55, else `other`) and whether its
    /// signer was checked against a registered LSP node id.
    public func lsps5Accepted(method: String, verified: Bool) {
        increment(
            "lsps5_notifications", help: "LSPS5 notifications taken, by method and verification",
            labels: [("method", LSPS5MethodLabel.of(method)), ("verified", verified ? "true" : "false")]
        )
    }

    /// An LSPS5 notification refused, by reason (`stale_timestamp`, `invalid_signature`, `replayed` …).
    public func lsps5Refused(reason: String) {
        increment("lsps5_refused", help: "LSPS5 notifications refused, by reason", labels: [("reason", reason)])
    }
}

/// Callers choose LSPS5 method names: only bLIP-55's own become labels.
enum LSPS5MethodLabel {
    static func of(_ method: String) -> String {
        if case .other = LSPS5Method(name: method) { return "other" }
        return method
    }
}
