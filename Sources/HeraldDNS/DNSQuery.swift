/// A standard query for one name and type, to read back what an UPDATE published straight from
/// the authoritative server (no recursion asked), with DNSSEC records when `dnssec` is set.
public struct DNSQuery: Sendable, Hashable {
    /// The UDP payload size the OPT record advertises; over TCP it only has to be plausible.
    static let ednsPayloadSize: UInt16 = 1232

    public var id: UInt16
    public var name: DNSName
    public var type: DNSRecordType
    /// Sends an EDNS OPT record with the DO bit (RFC 3225), so the answer carries RRSIGs.
    public var dnssec: Bool

    public init(id: UInt16 = .random(in: .min ... .max), name: DNSName, type: DNSRecordType, dnssec: Bool = false) {
        self.id = id
        self.name = name
        self.type = type
        self.dnssec = dnssec
    }

    public func encoded() -> [UInt8] {
        var writer = DNSWriter()
        writer.u16(id)
        writer.u16(0)
        writer.u16(1)
        writer.u16(0)
        writer.u16(0)
        writer.u16(dnssec ? 1 : 0)
        writer.name(name)
        writer.u16(type.rawValue)
        writer.u16(DNSClass.internet.rawValue)
        if dnssec {
            // OPT (RFC 6891 §6.1.2): the class holds the payload size, the TTL the extended
            // RCODE, version and flags, of which DO is the top bit.
            writer.name(.root)
            writer.u16(DNSRecordType.opt.rawValue)
            writer.u16(Self.ednsPayloadSize)
            writer.u32(0x0000_8000)
            writer.u16(0)
        }
        return writer.bytes
    }
}
