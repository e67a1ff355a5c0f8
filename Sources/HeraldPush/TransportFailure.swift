import Logging
import NIOCore
import NIOSSL

/// What a send becomes when no HTTP answer arrived: the connection failed, TLS was refused,
/// the request timed out or was cancelled. Always worth another attempt later, because
/// nothing says the push service rejected the message.
enum TransportFailure {
    static func outcome(for error: any Error) -> PushOutcome {
        PushOutcome(kind: .retry, reason: reason(for: error))
    }

    /// A stable reason code for metrics. The error text stays in logs: it never holds the
    /// request path (which carries the device token), only hosts and TLS details.
    static func reason(for error: any Error) -> String {
        switch error {
        case PushTransportError.timeout, ChannelError.connectTimeout:
            return "timeout"
        case PushTransportError.shutDown:
            return "cancelled"
        case PushTransportError.noHTTP2:
            return "no_http2"
        case PushTransportError.proxyRefused:
            return "proxy_refused"
        case is CancellationError:
            return "cancelled"
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return "tls_error"
        default:
            return "network_error"
        }
    }

    static func log(_ error: any Error, service: String, logger: Logger) {
        // A service that does not speak HTTP/2, or a proxy that refuses the tunnel, is a
        // configuration to fix, not a passing failure: said where an operator looks.
        let level: Logger.Level
        switch error {
        case PushTransportError.noHTTP2, PushTransportError.proxyRefused: level = .warning
        default: level = .debug
        }
        logger.log(
            level: level,
            "push transport failed",
            metadata: [
                "push.service": "\(service)",
                "error.type": "\(String(reflecting: type(of: error)))",
                "error": "\(error)",
            ]
        )
    }
}
