import Foundation

/// The payload checks every provider shares.
enum PayloadChecks {
    /// Refuses a payload over a push service's size limit.
    ///
    /// - Parameters:
    ///   - what: How the service names the payload, for the message ("the APNs payload").
    ///   - encode: Renders the bytes that count against the limit.
    static func checkSize(
        of what: String,
        limit: Int,
        service: String,
        encode: () throws -> Data
    ) throws(PushValidationError) {
        let size: Int
        do {
            size = try encode().count
        } catch {
            throw PushValidationError(code: "invalid_message", message: "the payload cannot be encoded as JSON")
        }
        if size > limit {
            throw PushValidationError(code: "payload_too_large", message: "\(what) is \(size) bytes; \(service) allows \(limit)")
        }
    }
}
