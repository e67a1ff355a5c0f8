import Foundation
import HTTPTypes
import HeraldDNS
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// BIP-353 names published by Herald on Debian's knot (started on loopback, zone signed inline),
/// read back from knot's DNSSEC-signed answers.
@Suite("BIP-353 names on knot", .enabled(if: KnotServer.isAvailable, "apt-get install knot"))
struct Bip353Tests {
    /// BOLT 12's published vectors (lightning/bolts `bolt12/offers-test.json`, copied into
    /// HeraldBolt12Tests): the shortest valid offer and the 566-character one.
    static let offers: (short: String, long: String) = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HeraldBolt12Tests/offers-test.json")
        let vectors = (try? JSONSerialization.jsonObject(with: Data(contentsOf: url))) as? [[String: Any]] ?? []
        let valid = vectors.filter { $0["valid"] as? Bool == true }.compactMap { $0["bolt12"] as? String }.sorted { $0.count < $1.count }
        return (valid.first ?? "", valid.last ?? "")
    }()

    static func settings(_ knot: KnotServer, keyText: String? = nil) throws -> Bip353Settings {
        Bip353Settings(server: knot.address, key: try BINDKeyFile.parse(keyText ?? knot.keyFileText), zone: try DNSName(knot.zone), ttl: 300)
    }

    /// The TXT texts at `<name>.user.<zone>` as knot answers them, and whether an RRSIG covers them.
    static func txt(_ knot: KnotServer, _ name: String) async throws -> (texts: [String], signed: Bool, code: DNSResponseCode) {
        let answer = try await DNSClient().query(
            try DNSName("\(name).user.\(knot.zone)"), type: .txt, dnssec: true, server: knot.address, timeout: .seconds(5))
        let texts = answer.answers.filter { $0.type == .txt }.compactMap(\.textStrings).map { strings in
            String(decoding: strings.joined(), as: UTF8.self)
        }
        let signed = answer.answers.contains { $0.type == .rrsig && $0.typeCovered == .txt }
        return (texts, signed, answer.responseCode)
    }

    static func waitFor(_ knot: KnotServer, _ name: String, texts: [String]) async throws {
        let reached = try await eventually(timeout: .seconds(20)) {
            let found = try await txt(knot, name)
            return found.texts == texts && (texts.isEmpty || found.signed)
        }
        let found = try await txt(knot, name)
        #expect(reached, "\(name): \(found)")
    }

    /// dnspython validates the record's RRSIG with the zone's DNSKEYs (and refuses it over a forged
    /// text), where it is installed (CI installs it).
    static func expectValidated(_ knot: KnotServer, _ name: String, text: String) async throws {
        guard await DNSSECCheck.isAvailable() else { return }
        let check = try await DNSSECCheck.run(knot: knot, owner: try DNSName("\(name).user.\(knot.zone)"))
        #expect(check.texts == [text.utf8.map { String(format: "%02x", $0) }.joined()])
        #expect(!check.signers.isEmpty && !check.forgedValidates)
    }

    static func claim(_ client: some TestClientProtocol, _ device: DeviceRegistrationAnswer, _ username: String, offer: String? = nil)
        async throws -> TestResponse
    {
        let offerField = offer.map { #","offer":"\#($0)""# } ?? ""
        return try await client.call(
            .post, "/api/v1/lnurlpay", key: device.deviceSecret,
            json: #"{"device_id":"\#(device.deviceID)","username":"\#(username)"\#(offerField)}"#)
    }

    @Test(
        "claim, replace with a 566-character offer, rename, release, delete: each in knot's signed answers; an invalid offer changes nothing"
    )
    func lifecycle() async throws {
        #expect(Self.offers.long.count == 566)
        let knot = try await KnotServer.start()
        do {
            var configured = try TestNDS()
            configured.settings.bip353 = try Self.settings(knot)
            let nds = configured
            try await nds.app().test(.live) { client in
                let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"b353"}"#)
                let device = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: created.body))

                let first = try await Self.claim(client, device, "alice", offer: Self.offers.short)
                #expect(first.status == .created)
                #expect(first.json["bip353"] as? String == "₿alice@example.com")
                try await Self.waitFor(knot, "alice", texts: ["bitcoin:?lno=" + Self.offers.short])
                try await Self.expectValidated(knot, "alice", text: "bitcoin:?lno=" + Self.offers.short)
                #expect(
                    try await eventually {
                        let shown = try await client.call(.get, "/api/v1/lnurlpay?device_id=\(device.deviceID)", key: device.deviceSecret)
                        return shown.json["bip353_state"] as? String == "published"
                    })

                // Another offer replaces the record: one TXT, split into 255-byte strings.
                #expect(try await Self.claim(client, device, "alice", offer: Self.offers.long).status == .ok)
                try await Self.waitFor(knot, "alice", texts: ["bitcoin:?lno=" + Self.offers.long])
                let strings = try await DNSClient().query(
                    try DNSName("alice.user.\(knot.zone)"), type: .txt, server: knot.address, timeout: .seconds(5)
                ).answers.first?.textStrings
                #expect(strings?.map(\.count) == [255, 255, 69])
                try await Self.expectValidated(knot, "alice", text: "bitcoin:?lno=" + Self.offers.long)

                // An invalid offer is refused and the record stays.
                let bad = try await Self.claim(client, device, "alice", offer: "lno1qqqq")
                #expect(bad.status == .badRequest && bad.json["error"] as? String == "invalid_offer")
                #expect(try await Self.txt(knot, "alice").texts == ["bitcoin:?lno=" + Self.offers.long])

                // Renamed: the old name goes in the same UPDATE as the new one comes.
                #expect(try await Self.claim(client, device, "bob").status == .ok)
                try await Self.waitFor(knot, "bob", texts: ["bitcoin:?lno=" + Self.offers.long])
                try await Self.waitFor(knot, "alice", texts: [])
                let gone = try await Self.txt(knot, "alice")
                #expect(gone.code == .nameError)

                // Released: gone.
                let released = try await client.call(.delete, "/api/v1/lnurlpay?device_id=\(device.deviceID)", key: device.deviceSecret)
                #expect(released.status == .noContent)
                try await Self.waitFor(knot, "bob", texts: [])

                // Claimed again, then the device deleted: gone.
                #expect(try await Self.claim(client, device, "carol", offer: Self.offers.short).status == .created)
                try await Self.waitFor(knot, "carol", texts: ["bitcoin:?lno=" + Self.offers.short])
                let deleted = try await client.call(.delete, "/api/v1/devices/\(device.deviceID)", key: device.deviceSecret)
                #expect(deleted.status == .noContent)
                try await Self.waitFor(knot, "carol", texts: [])
                #expect(try await eventually { try await nds.store.counts().pending == 0 })
                #expect(try await nds.store.counts().dead == 0)
            }
        } catch {
            await knot.stop()
            throw error
        }
        await knot.stop()
    }

    @Test("a claim made while knot is down is published once it is back; a wrong TSIG key ends in a dead letter that says NOTAUTH")
    func unreachableAndRefused() async throws {
        let knot = try await KnotServer.start()
        do {
            var configured = try TestNDS()
            configured.settings.bip353 = try Self.settings(knot)
            let nds = configured
            try await nds.app().test(.live) { client in
                let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"b354"}"#)
                let device = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: created.body))
                await knot.pause()
                let claimed = try await Self.claim(client, device, "dave", offer: Self.offers.short)
                #expect(claimed.status == .created)
                #expect(claimed.json["bip353_state"] as? String == "pending")
                try await knot.resume()
                try await Self.waitFor(knot, "dave", texts: ["bitcoin:?lno=" + Self.offers.short])
            }

            // The same server, another key of the same name: knot cannot check the signature.
            var misconfigured = try TestNDS()
            let forged = knot.keyFileText.replacingOccurrences(
                of: Data(knot.keySecret).base64EncodedString(), with: Data(repeating: 7, count: 32).base64EncodedString())
            misconfigured.settings.bip353 = try Self.settings(knot, keyText: forged)
            let wrong = misconfigured
            try await wrong.app().test(.live) { client in
                let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"b355"}"#)
                let device = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: created.body))
                #expect(try await Self.claim(client, device, "erin", offer: Self.offers.short).status == .created)
                #expect(
                    try await eventually {
                        let shown = try await client.call(.get, "/api/v1/lnurlpay?device_id=\(device.deviceID)", key: device.deviceSecret)
                        return (shown.json["bip353_state"] as? String)?.hasPrefix("failed") == true
                    })
                let shown = try await client.call(.get, "/api/v1/lnurlpay?device_id=\(device.deviceID)", key: device.deviceSecret)
                #expect((shown.json["bip353_state"] as? String)?.hasPrefix("failed: NOTAUTH") == true, "\(shown.json)")
                #expect(try await wrong.store.counts().dead == 1)
                #expect(try await Self.txt(knot, "erin").texts.isEmpty)
            }
        } catch {
            await knot.stop()
            throw error
        }
        await knot.stop()
    }

    /// A request to a `herald serve` child, its status and JSON answer.
    static func http(_ method: String, _ url: String, bearer: String? = nil, json: String? = nil) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let (body, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:])
    }

    @Test("a claim committed while knot is down survives a kill -9 of herald serve and is published once both are back")
    func killedBeforePublication() async throws {
        let knot = try await KnotServer.start()
        let server: HeraldServeProcess
        do {
            await knot.pause()
            var environment = ProcessInfo.processInfo.environment
            environment["HERALD_BIP353_TSIG_KEY_FILE"] = knot.keyFile.path
            server = try await HeraldServeProcess.running(
                arguments: ["--bip353-server", knot.address.description, "--bip353-zone", knot.zone], environment: environment)
        } catch {
            await knot.stop()
            throw error
        }
        do {
            let (status, device) = try await Self.http(
                "POST", server.baseURL + "/api/v1/devices", json: #"{"platform":"ios","push_token":"b356"}"#)
            #expect(status == 201)
            let id = try #require(device["device_id"] as? String)
            let secret = try #require(device["device_secret"] as? String)
            let (claimed, answer) = try await Self.http(
                "POST", server.baseURL + "/api/v1/lnurlpay", bearer: secret,
                json: #"{"device_id":"\#(id)","username":"frank","offer":"\#(Self.offers.short)"}"#)
            #expect(claimed == 201 && answer["bip353_state"] as? String == "pending", "\(answer)")
            await server.crash()
            try await knot.resume()
            #expect(try await server.restart())
            try await Self.waitFor(knot, "frank", texts: ["bitcoin:?lno=" + Self.offers.short])
            if try await Self.txt(knot, "frank").texts.isEmpty { Issue.record("herald's log: \(server.logTail())") }
            #expect(
                try await eventually {
                    try await Self.http("GET", server.baseURL + "/api/v1/lnurlpay?device_id=\(id)", bearer: secret).1["bip353_state"] as? String
                        == "published"
                })
        } catch {
            _ = await server.stop()
            await knot.stop()
            throw error
        }
        _ = await server.stop()
        await knot.stop()
    }
}
