import Foundation
import HeraldDNS

/// dnspython's DNSSEC validation, as an implementation independent of Knot and of HeraldDNS:
/// it asks the server for the zone's DNSKEY RRset (checking its self-signature) and the TXT
/// RRset with its RRSIG, validates the RRSIG, and tries the same RRSIG over a forged text.
public enum DNSSECCheck {
    public struct Outcome: Decodable, Sendable {
        /// Each TXT record's character-strings joined, in hex.
        public var texts: [String]
        public var signers: [Int]
        public var algorithm: Int
        public var forgedValidates: Bool

        enum CodingKeys: String, CodingKey {
            case texts, signers, algorithm
            case forgedValidates = "forged_validates"
        }
    }

    static let script = """
        import json, sys
        import dns.dnssec, dns.message, dns.name, dns.query, dns.rdataclass, dns.rdatatype, dns.rrset
        host, port, zone, owner = sys.argv[1], int(sys.argv[2]), dns.name.from_text(sys.argv[3]), dns.name.from_text(sys.argv[4])
        def ask(name, rdtype):
            query = dns.message.make_query(name, rdtype, want_dnssec=True)
            return dns.query.tcp(query, host, port=port, timeout=5)
        def find(answer, name, rdtype, covers=dns.rdatatype.NONE):
            return answer.find_rrset(answer.answer, name, dns.rdataclass.IN, rdtype, covers)
        keys = ask(zone, dns.rdatatype.DNSKEY)
        dnskey = find(keys, zone, dns.rdatatype.DNSKEY)
        keyring = {zone: dnskey}
        dns.dnssec.validate(dnskey, find(keys, zone, dns.rdatatype.RRSIG, dns.rdatatype.DNSKEY), keyring)
        answer = ask(owner, dns.rdatatype.TXT)
        txt = find(answer, owner, dns.rdatatype.TXT)
        rrsig = find(answer, owner, dns.rdatatype.RRSIG, dns.rdatatype.TXT)
        dns.dnssec.validate(txt, rrsig, keyring)
        forged = dns.rrset.from_text(owner, txt.ttl, "IN", "TXT", '"bitcoin:?lno=lno1forged"')
        try:
            dns.dnssec.validate(forged, rrsig, keyring)
            forged_validates = True
        except dns.dnssec.ValidationFailure:
            forged_validates = False
        print(json.dumps({
            "texts": [b"".join(record.strings).hex() for record in txt],
            "signers": sorted({signature.key_tag for signature in rrsig}),
            "algorithm": int(next(iter(rrsig)).algorithm),
            "forged_validates": forged_validates,
        }))
        """

    public static func isAvailable() async -> Bool {
        let result = try? await ProgramRun.output(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import dns.dnssec, cryptography"])
        return result?.status == 0
    }

    public static func run(knot: KnotServer, owner: DNSName) async throws -> Outcome {
        let (status, output) = try await ProgramRun.output(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, "127.0.0.1", "\(knot.port)", knot.zone, owner.description],
            includeStandardError: true)
        guard status == 0, let data = output.split(separator: "\n").last.map({ Data($0.utf8) }) else {
            throw KnotServerError(message: "dnspython's check failed (\(status)):\n\(output)")
        }
        return try JSONDecoder().decode(Outcome.self, from: data)
    }
}
