import Foundation

/// The payload checks every provider shares.
enum PayloadChecks {
    /// Refuses a payload over a push service's size limit.
    ///
    /// - Parameters:
    ///   - what: How the service names the payload, for the message ("the APNs payload").
    ///   - encode: Renders the bytes that count against the limit.
    /// - Returns: The rendered bytes, so a caller that sends them need not render twice.
    @discardableResult
    static func checkSize(
        of what: String,
        limit: Int,
        service: String,
        encode: () throws -> Data
    ) throws(PushValidationError) -> Data {
        let rendered: Data
        do {
            rendered = try encode()
        } catch {
            throw PushValidationError(.invalidMessage, message: "the payload cannot be encoded as JSON")
        }
        if rendered.count > limit {
            throw PushValidationError(
                .payloadTooLarge, message: "\(what) is \(rendered.count) bytes; \(service) allows \(limit)"
            )
        }
        return rendered
    }
}
