import Foundation

/// Reads the parts of a compact JWT without verifying it, for the checks jwt-kit's verify does
/// not make (the exact `kid` and `alg` in the header, an integer `iat`).
enum JWTSegments {
    /// The decoded header and payload JSON, or nil when `token` is not three base64url parts.
    static func decode(_ token: String) -> (header: Data, payload: Data)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = base64URL(parts[0]), let payload = base64URL(parts[1]) else {
            return nil
        }
        return (header, payload)
    }

    static func base64URL(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// A JWT header's fields that the mocks check.
struct JWTHeaderFields: Decodable {
    var alg: String?
    var kid: String?
}
