import Crypto
import Foundation
import HeraldBolt11
import HeraldDevice
import HeraldSecp256k1

/// The development wallet's invoices as real BOLT11: signed with the node key kept in the
/// wallet's folder (``NodeKeyFile``), on regtest unless told otherwise.
///
/// Each invoice carries a fresh payment secret (`s`), the wallet's payment hash (`p`), the
/// description or, for LNURL, its SHA-256 (`h`, LUD-06), the expiry (`x`), the final CLTV
/// delta (`c`) and the features a payer needs to know (`9`: variable-length onion and payment
/// secret, both required). No route hints: no channel stands behind a development wallet.
public struct Bolt11InvoiceIssuer: DevelopmentInvoiceIssuer {
    public let key: NodeSecretKey
    public let network: Bolt11Network

    /// BOLT11's default, written out.
    public static let minFinalCLTVExpiryDelta: UInt64 = 18
    /// `var_onion_optin` (8) and `payment_secret` (14), both required, as BOLT 9 asks of invoices.
    public static let features: Set<Int> = [8, 14]

    public init(key: NodeSecretKey, network: Bolt11Network = .regtest) {
        self.key = key
        self.network = network
    }

    /// The issuer whose key is in `folder` (created there on first use).
    public init(folder: URL, network: Bolt11Network = .regtest) throws {
        self.init(key: try NodeKeyFile.loadOrCreate(in: folder), network: network)
    }

    /// The node id the invoices recover to.
    public var nodeID: NodeID { key.nodeID }

    public func invoice(for terms: InvoiceTerms) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let description: Bolt11Field =
            terms.descriptionHash
            ? .descriptionHash(Array(SHA256.hash(data: Array(terms.description.utf8)))) : .description(terms.description)
        let invoice = Bolt11Invoice(
            network: network,
            amountMsat: terms.amountMsat,
            timestamp: UInt64(max(0, terms.createdAt.timeIntervalSince1970)),
            fields: [
                .paymentSecret(secret), .paymentHash(terms.paymentHash), description,
                .expiry(UInt64(terms.expirySeconds)), .minFinalCLTVExpiryDelta(Self.minFinalCLTVExpiryDelta),
                .features(Self.features),
            ]
        )
        return try invoice.signed(with: key)
    }
}
