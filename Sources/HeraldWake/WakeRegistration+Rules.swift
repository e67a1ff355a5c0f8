import Foundation
import HeraldSecp256k1
import HeraldWire

/// A registration the gateway refuses: `invalid_request` for a malformed one (the client's
/// mistake), `missing_proof` or `invalid_proof` for an identity it does not prove (an authentication).
public struct WakeRegistrationProblem: ErrorCodeProviding, Sendable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(code.rawValue): \(message)" }
}

extension WakeRegistrationRequest {
    /// The skew a registration's `ts` may have from the gateway's clock.
    public static let maximumSkew: TimeInterval = 600

    /// Checks every field's form, then every proof over the preimage for `audience`. `ts`
    /// is checked by the caller, which answers it with its own status.
    public func validate(audience: String) throws(WakeRegistrationProblem) -> [ProvenIdentity] {
        func invalid(_ message: String) -> WakeRegistrationProblem { WakeRegistrationProblem(.invalidRequest, message) }
        for (name, value) in [("app", app), ("install_id", installID), ("push_token", pushToken)] where value.contains("\n") {
            throw invalid("\(name) contains a newline")
        }
        guard (1...64).contains(app.utf8.count),
            app.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else { throw invalid("app must be 1 to 64 letters, digits, '.', '-' or '_'") }
        guard (16...64).contains(installID.utf8.count),
            installID.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else { throw invalid("install_id must be 16 to 64 base64url characters") }
        switch platform {
        case .apns:
            guard (64...200).contains(pushToken.utf8.count), pushToken.utf8.count % 2 == 0, pushToken.utf8.allSatisfy(\.isLowerHex) else {
                throw invalid("an APNs push_token is 64 to 200 lower-case hex digits")
            }
        case .fcm:
            guard environment == .production else { throw invalid("FCM devices are always production") }
            guard (100...4096).contains(pushToken.utf8.count),
                pushToken.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "-") }
                )
            else { throw invalid("an FCM push_token is 100 to 4096 letters, digits, '_', ':' or '-'") }
        }
        guard encryptionKey.utf8.count == 66, encryptionKey.utf8.allSatisfy(\.isLowerHex), NodeID(hex: encryptionKey) != nil else {
            throw invalid("encryption_key must be a compressed secp256k1 key, 66 lower-case hex digits")
        }
        guard secretSHA256.utf8.count == 64, secretSHA256.utf8.allSatisfy(\.isLowerHex) else {
            throw invalid("secret_sha256 must be 64 lower-case hex digits")
        }
        for entry in identities + topics where entry.isEmpty || entry.contains(",") || entry.contains("\n") {
            throw invalid("a list entry is empty or holds ',' or a newline")
        }
        let unique = canonicalIdentities
        guard (1...2).contains(identities.count), unique.count == identities.count else {
            throw invalid("identities must be one ln: and/or one pk: identity")
        }
        var proven: [ProvenIdentity] = []
        for text in unique {
            guard let identity = ProvenIdentity(text) else {
                throw invalid("identity \(text.prefix(80)) is not a canonical ln: node key or pk: pubky key")
            }
            proven.append(identity)
        }
        if proven.count == 2, proven[0].scheme == proven[1].scheme { throw invalid("two identities must be one ln: and one pk:") }
        guard topics.count <= WakeTopicName.maximumPerDevice else {
            throw invalid("at most \(WakeTopicName.maximumPerDevice) topics")
        }
        if let bad = topics.first(where: { !WakeTopicName.isValid($0) }) {
            throw invalid("topic \(bad.prefix(80)) is neither a name (namespace.Name) nor a pattern (namespace.*)")
        }
        let message = preimage(audience: audience)
        for identity in proven {
            let text = identity.description
            guard let proof = proofs.first(where: { $0.identity == text }) else {
                throw WakeRegistrationProblem(.missingProof, "no proof for \(text)")
            }
            guard identity.verifies(proof.sig, over: message) else {
                throw WakeRegistrationProblem(.invalidProof, "the proof for \(text) does not verify over this registration for audience \(audience)")
            }
        }
        return proven
    }
}

extension ProvenIdentity {
    /// `ln` or `pk`.
    public var scheme: String {
        switch self {
        case .lightning: "ln"
        case .pubky: "pk"
        }
    }
}
