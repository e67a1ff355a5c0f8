import Foundation

// The LNURL-pay bodies (LUD-06, LUD-12, LUD-16, LUD-21) that a device answers with and the
// Lightning-address service hands to payers, in the shapes the Breez notification plugin uses.

/// The first LNURL-pay answer (LUD-06): what the payer may send and where to ask for the invoice.
///
/// `{"callback": …, "minSendable": …, "maxSendable": …, "metadata": "[[\"text/plain\",…]]",
/// "tag": "payRequest", "commentAllowed": 255}`
public struct LnurlPayInfo: Codable, Hashable, Sendable {
    /// The URL the payer calls with `?amount=<msat>` for the invoice.
    public var callback: String
    /// Millisatoshis, at least 1 and at most `maxSendable`.
    public var minSendable: UInt64
    /// Millisatoshis.
    public var maxSendable: UInt64
    /// The metadata JSON array *as a string*: the invoice's description hash commits to these exact bytes.
    public var metadata: String
    /// Always `payRequest`.
    public var tag: String
    /// LUD-12: the longest comment the payer may attach; absent or 0 means none.
    public var commentAllowed: Int?

    /// The value of `tag` for an LNURL-pay answer.
    public static let payRequestTag = "payRequest"

    public init(callback: String, minSendable: UInt64, maxSendable: UInt64, metadata: String, commentAllowed: Int? = nil) {
        self.callback = callback
        self.minSendable = minSendable
        self.maxSendable = maxSendable
        self.metadata = metadata
        self.tag = Self.payRequestTag
        self.commentAllowed = commentAllowed
    }
}

/// The LNURL-pay metadata (LUD-06 `text/plain`, LUD-16 `text/identifier`, …) and its one string form.
public struct LnurlPayMetadata: Hashable, Sendable {
    /// `[mime type, content]` pairs in order.
    public var entries: [Entry]

    public struct Entry: Hashable, Sendable {
        public var type: String
        public var content: String
        public init(type: String, content: String) {
            self.type = type
            self.content = content
        }
    }

    public static let plainTextType = "text/plain"
    public static let identifierType = "text/identifier"
    public static let emailType = "text/email"

    public init(entries: [Entry]) { self.entries = entries }

    /// The usual metadata: a description and, for a Lightning address, its identifier (LUD-16 requires it).
    public init(description: String, identifier: String? = nil) {
        var entries = [Entry(type: Self.plainTextType, content: description)]
        if let identifier, !identifier.isEmpty {
            entries.append(Entry(type: Self.identifierType, content: identifier))
        }
        self.entries = entries
    }

    /// Parses the string a service sent; `nil` if it is not an array of string pairs.
    public init?(jsonString: String) {
        guard let pairs = try? JSONDecoder().decode([[String]].self, from: Data(jsonString.utf8)) else { return nil }
        var entries: [Entry] = []
        for pair in pairs {
            guard pair.count >= 2 else { return nil }
            entries.append(Entry(type: pair[0], content: pair[1]))
        }
        self.entries = entries
    }

    /// The JSON string for `metadata` and for the description hash: compact, slashes unescaped.
    public var jsonString: String {
        let pairs = entries.map { [$0.type, $0.content] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Encoding an array of string arrays cannot fail.
        let data = (try? encoder.encode(pairs)) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    public var plainText: String? { entries.first { $0.type == Self.plainTextType }?.content }
    public var identifier: String? { entries.first { $0.type == Self.identifierType }?.content }
}

/// The second LNURL-pay answer (LUD-06 with the LUD-21 `verify` URL): `{"pr": …, "routes": [], "verify": …}`.
public struct LnurlPayInvoice: Codable, Hashable, Sendable {
    /// The BOLT11 invoice.
    public var pr: String
    /// Always empty; kept because LUD-06 clients and the Breez plugin expect the key.
    public var routes: [String]
    /// LUD-21: where the payer checks settlement, the payment hash filled in.
    public var verify: String?

    public init(pr: String, verify: String? = nil) {
        self.pr = pr
        self.routes = []
        self.verify = verify
    }

    /// The literal placeholder a service puts in its verify URL template.
    public static let paymentHashPlaceholder = "{payment_hash}"

    /// Fills a verify URL template with a payment hash.
    public static func verifyURL(template: String, paymentHash: String) -> String {
        template.replacingOccurrences(of: paymentHashPlaceholder, with: paymentHash)
    }
}

/// The LUD-21 verify answer: `{"status": "OK", "settled": true, "preimage": "…", "pr": "…"}`.
///
/// `preimage` is written as `null` while unsettled, as LUD-21 shows it.
public struct LnurlPayVerification: Codable, Hashable, Sendable {
    public var status: String
    public var settled: Bool
    public var preimage: String?
    public var pr: String

    public init(settled: Bool, preimage: String?, pr: String) {
        self.status = LnurlStatus.ok
        self.settled = settled
        // A preimage is only revealed once the payment settled.
        self.preimage = settled ? preimage : nil
        self.pr = pr
    }

    enum CodingKeys: String, CodingKey { case status, settled, preimage, pr }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(status, forKey: .status)
        try c.encode(settled, forKey: .settled)
        try c.encode(preimage, forKey: .preimage)
        try c.encode(pr, forKey: .pr)
    }
}

/// The LNURL error answer: `{"status": "ERROR", "reason": "…"}`.
public struct LnurlError: Codable, Hashable, Sendable, Error {
    public var status: String
    public var reason: String
    public init(reason: String) {
        self.status = LnurlStatus.error
        self.reason = reason
    }
}

/// The `status` values of LNURL answers.
public enum LnurlStatus {
    public static let ok = "OK"
    public static let error = "ERROR"
}

/// The device's answer to a BOLT12 invoice request: `{"invoice": "lni…"}` or `{"error": "…"}`.
public enum Bolt12InvoiceReply: Hashable, Sendable {
    case invoice(String)
    case error(String)
}

extension Bolt12InvoiceReply: Codable {
    enum CodingKeys: String, CodingKey { case invoice, error }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let invoice = try c.decodeIfPresent(String.self, forKey: .invoice) {
            self = .invoice(invoice)
        } else if let error = try c.decodeIfPresent(String.self, forKey: .error) {
            self = .error(error)
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "one of \"invoice\" or \"error\" is required")
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .invoice(let invoice): try c.encode(invoice, forKey: .invoice)
        case .error(let error): try c.encode(error, forKey: .error)
        }
    }
}

/// How long a caller may serve a device's answer from cache (`Cache-Control: max-age`), as the
/// Breez plugin sets it, so a payer that polls does not wake the phone every time.
public enum ReplyCacheLifetime {
    /// LNURL-pay info: the limits and metadata change rarely.
    public static let payInfo = 60 * 60 * 24
    /// A settled verify answer never changes again.
    public static let settledVerification = 60 * 60 * 24 * 7
    /// An unsettled verify answer: long enough to absorb a payer polling in a tight loop.
    public static let unsettledVerification = 3

    /// The header value for a lifetime, or `nil` for none.
    public static func headerValue(maxAge seconds: Int) -> String? {
        seconds > 0 ? "max-age=\(seconds)" : nil
    }
}

/// `POST` to a zap's `zap_url`: the device says the zap's invoice is paid. The preimage proves
/// it (its SHA-256 is the payment hash); the server then publishes the zap receipt.
public struct ZapPaymentReport: Codable, Sendable, Hashable {
    /// 64 hex digits.
    public var preimage: String

    public init(preimage: String) {
        self.preimage = preimage
    }
}

/// The answer to a ``ZapPaymentReport``.
public struct ZapPaymentAnswer: Codable, Sendable, Hashable {
    /// The relays the receipt is being published to.
    public var relays: Int
    /// Publication jobs newly made (0 when an earlier report made them).
    public var jobIDs: [String]

    public init(relays: Int, jobIDs: [String]) {
        self.relays = relays
        self.jobIDs = jobIDs
    }

    enum CodingKeys: String, CodingKey {
        case relays
        case jobIDs = "job_ids"
    }
}
