/// A domain name as Herald writes it: lower-case ASCII labels of letters, digits, `-` and `_`,
/// each at most 63 bytes, at most 255 bytes in wire form.
///
/// Lower case only, rather than folded: RFC 8945 signs key and algorithm names in canonical
/// (lower-case) form, and a name that reached the wire in another case than the one it was
/// signed in would fail verification far from where it was made. Names read from a server's
/// answer are folded to lower case instead (DNS compares names case-insensitively).
public struct DNSName: Sendable, Hashable, CustomStringConvertible {
    /// The labels, most specific first, without the root's empty label.
    public let labels: [[UInt8]]

    /// The longest name in wire form (RFC 1035 §2.3.4), length bytes and the root's zero included.
    public static let maximumWireLength = 255
    /// The longest label (RFC 1035 §2.3.4).
    public static let maximumLabelLength = 63

    /// The root, `.`.
    public static let root = DNSName(uncheckedLabels: [])

    /// Parses `alice.user._bitcoin-payment.example.com` (a trailing dot is allowed).
    public init(_ text: String) throws(DNSNameError) {
        if text == "." {
            self = .root
            return
        }
        let trimmed = text.hasSuffix(".") ? String(text.dropLast()) : text
        guard !trimmed.isEmpty else { throw DNSNameError(.empty, name: text) }
        var labels: [[UInt8]] = []
        for label in trimmed.split(separator: ".", omittingEmptySubsequences: false) {
            let bytes = Array(label.utf8)
            guard !bytes.isEmpty else { throw DNSNameError(.emptyLabel, name: text) }
            guard bytes.count <= Self.maximumLabelLength else { throw DNSNameError(.labelTooLong, name: text) }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    continue
                case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    throw DNSNameError(.notLowercase, name: text)
                default:
                    throw DNSNameError(.invalidCharacter, name: text)
                }
            }
            labels.append(bytes)
        }
        let name = DNSName(uncheckedLabels: labels)
        guard name.wireLength <= Self.maximumWireLength else { throw DNSNameError(.nameTooLong, name: text) }
        self = name
    }

    /// Labels read off the wire, already within the length limits; folded to lower case.
    init(uncheckedLabels labels: [[UInt8]]) {
        self.labels = labels.map { label in
            label.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
        }
    }

    /// Uncompressed wire form: each label behind its length, then the root's zero. It is also
    /// the canonical form RFC 4034 §6.2 and RFC 8945 §4.3.3 sign, as the labels are lower case.
    public var wire: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(wireLength)
        for label in labels {
            bytes.append(UInt8(label.count))
            bytes.append(contentsOf: label)
        }
        bytes.append(0)
        return bytes
    }

    public var wireLength: Int { labels.reduce(1) { $0 + 1 + $1.count } }

    /// Whether this name is `zone` or below it.
    public func isSubdomain(of zone: DNSName) -> Bool {
        labels.count >= zone.labels.count && Array(labels.suffix(zone.labels.count)) == zone.labels
    }

    /// The presentation form, with a trailing dot; bytes outside printable ASCII (only ever in
    /// names read from a server) as `\DDD`.
    public var description: String {
        guard !labels.isEmpty else { return "." }
        var text = ""
        for label in labels {
            for byte in label {
                if byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "."), byte != UInt8(ascii: "\\") {
                    text.unicodeScalars.append(Unicode.Scalar(byte))
                } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "\\") {
                    text += "\\" + String(Unicode.Scalar(byte))
                } else {
                    let digits = String(byte)
                    text += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
                }
            }
            text += "."
        }
        return text
    }
}

/// Why a text is not a name Herald writes.
public struct DNSNameError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case empty = "empty"
        case emptyLabel = "empty_label"
        case labelTooLong = "label_too_long"
        case nameTooLong = "name_too_long"
        case notLowercase = "not_lowercase"
        case invalidCharacter = "invalid_character"
    }

    public var reason: Reason
    /// The text as given.
    public var name: String

    public init(_ reason: Reason, name: String) {
        self.reason = reason
        self.name = name
    }

    public var description: String { "\(reason.rawValue): \(name)" }
}
