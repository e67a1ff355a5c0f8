import Foundation
import HeraldDNS

/// `bip353.*`: the server, its TSIG key (required with it), the zone and the TTL.
extension Bip353Settings: RoomSettings {
    static let scope: String? = "bip353"

    static var descriptions: [SettingDescription] {
        [
            .init(
                "server", default: "",
                "host:port of the DNS primary that takes RFC 2136 updates for the BIP-353 zone; turns BIP-353 names on"),
            .init(
                "tsig_key_file", flag: false, default: "",
                "The TSIG key the updates are signed with: a BIND key file as tsig-keygen writes it (hmac-sha256 or hmac-sha512)"),
            .init("zone", default: "_bitcoin-payment.<public_url host>", "The zone records are written in: <username>.user.<zone>"),
            .init("ttl", default: String(defaultTTL), "Seconds a BIP-353 record lives in caches; less when its offer expires sooner"),
        ]
    }

    /// Nil, BIP-353 names off, without `bip353.server`.
    init?(reader: SettingsReader) throws {
        guard let server = reader.text("server") else { return nil }
        typealias Invalid = HeraldConfiguration.Invalid
        guard let address = DNSServerAddress(server) else {
            throw Invalid("\(reader.source("server")) must be host:port (or host, port 53), not '\(server)'")
        }
        guard let file = reader.text("tsig_key_file") else {
            throw Invalid("\(reader.source("server")) needs \(reader.source("tsig_key_file")): updates are signed with TSIG")
        }
        let key: TSIGKey
        do {
            key = try BINDKeyFile.parse(String(contentsOfFile: file, encoding: .utf8))
        } catch let error as BINDKeyFileError {
            throw Invalid("\(reader.source("tsig_key_file")) '\(file)': \(error.description)")
        } catch {
            throw Invalid("\(reader.source("tsig_key_file")): cannot read '\(file)'")
        }
        let zoneText = reader.text("zone") ?? "_bitcoin-payment." + (URLComponents(string: reader.publicURL)?.host ?? "")
        let zone: DNSName
        do {
            zone = try DNSName(zoneText.lowercased())
        } catch {
            throw Invalid("\(reader.source("zone")) is not a DNS name: \(error.description)")
        }
        self.init(server: address, key: key, zone: zone, ttl: try reader.int("ttl") ?? Self.defaultTTL)
    }
}
