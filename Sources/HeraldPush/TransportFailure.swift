import AsyncHTTPClient
import Logging
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
        case let error as HTTPClientError
        where error == .connectTimeout || error == .readTimeout || error == .writeTimeout
            || error == .deadlineExceeded || error == .tlsHandshakeTimeout
            || error == .getConnectionFromPoolTimeout:
            return "timeout"
        case let error as HTTPClientError where error == .cancelled:
            return "cancelled"
        case is CancellationError:
            return "cancelled"
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return "tls_error"
        default:
            return "network_error"
        }
    }

    static func log(_ error: any Error, service: String, logger: Logger) {
        logger.debug(
            "push transport failed",
            metadata: [
                "push.service": "\(service)",
                "error.type": "\(String(reflecting: type(of: error)))",
                "error": "\(error)",
            ]
        )
    }
}
