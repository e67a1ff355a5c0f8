import Foundation
import HeraldSecp256k1
import HeraldStore
import HeraldWake
import HeraldWire

/// The identities a registration or an update claims, each proven by a signature of its key
/// over ``DeviceIdentityClaim/preimage``: only then may pushes addressed to it (a Breez Spark
/// payment webhook's `ln:<user_pubkey>`) reach the device.
enum IdentityClaims {
    /// How far `ts` may be from the server's clock, either way: one window for every proof,
    /// the wake gateway's included.
    static let tolerance: TimeInterval = WakeRegistrationRequest.maximumSkew
    /// Identities one device may hold: a node key and a Pubky key with room to spare.
    static let maximum = 8

    /// The canonical identities proven, sorted; nil when the body claims none (an update then
    /// keeps the device's). Every check runs before anything is stored.
    ///
    /// - Parameter pushToken: The token as the body sent it; for Web Push the subscription's endpoint.
    /// - Parameter audience: This deployment's host, which every proof signs.
    static func proven(
        audience: String, platform: Platform, pushToken: String, identities: [String]?, proofs: [IdentityProofBody]?, ts: Int64?, now: Date
    ) throws -> [String]? {
        guard let identities else {
            if proofs?.isEmpty == false || ts != nil {
                throw APIError(.invalidIdentities, "proofs and ts come with the identities they prove")
            }
            return nil
        }
        guard identities.count <= maximum else {
            throw APIError(.invalidIdentities, "at most \(maximum) identities per device")
        }
        var parsed: [ProvenIdentity] = []
        for text in identities {
            // ProvenIdentity takes only the canonical spelling, the one stored and signed.
            guard let identity = ProvenIdentity(text) else {
                throw APIError(
                    .invalidIdentity,
                    "'\(text.prefix(80))' is not an identity: ln: and 66 lower-case hex digits of a compressed secp256k1 key, or pk: and 52 z-base-32 characters of an Ed25519 key"
                )
            }
            if !parsed.contains(identity) { parsed.append(identity) }
        }
        guard !parsed.isEmpty else { return [] }
        guard let ts else { throw APIError(.missingTimestamp, "ts (unix seconds the proofs were signed at) is required with identities") }
        guard abs(now.timeIntervalSince1970 - TimeInterval(ts)) <= tolerance else {
            throw APIError(
                .staleTimestamp,
                "ts \(ts) is not within \(Int(tolerance)) s of this server's clock (unix \(Int64(now.timeIntervalSince1970.rounded(.down)))): check the phone's clock"
            )
        }
        let preimage = DeviceIdentityClaim.preimage(
            audience: audience, platform: platform.rawValue, pushToken: pushToken, identities: identities, ts: ts)
        for identity in parsed {
            let name = identity.description
            guard let proof = proofs?.first(where: { $0.identity == name }), identity.verifies(proof.sig, over: preimage) else {
                throw APIError(
                    .invalidProof,
                    "no proof of '\(name)' verifies over the herald-identity-v1 preimage of this platform, push token, identities and ts")
            }
        }
        return parsed.map(\.description).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Under what the store's signature memory keeps identity proofs.
    static let replayScope = "identity-proof"

    /// Takes what a registration's proofs signed once while its `ts` is within the window: the
    /// same again (a registration body captured and sent again, here or at another instance) is
    /// `409 proof_replayed`. Kept by the signed text, not the signature: an ECDSA signature can
    /// be rewritten into another valid one, the text it signs cannot. Device registration and
    /// the wake gateway both call it.
    static func takeOnce(_ preimage: String, signedAt ts: Int64, replays: any LSPS5Store, now: Date) async throws {
        let fresh: Bool = try await replays.rememberLSPS5Signature(
            deviceID: replayScope, signature: Secrets.hash(preimage).lowercaseHex,
            expiresAt: Date(timeIntervalSince1970: TimeInterval(ts) + tolerance + 1), now: now)
        guard fresh else {
            throw APIError(.proofReplayed, "this registration's proofs were used already; sign it again with a new ts")
        }
    }
}
