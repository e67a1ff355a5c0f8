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
import Synchronization
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

    /// A server whose BIP-353 names go to `knot`, its other settings adjusted by `adjust`.
    static func nds(_ knot: KnotServer, _ adjust: (inout ServerSettings) -> Void = { _ in }) throws -> TestNDS {
        var nds = try TestNDS()
        nds.settings.bip353 = try settings(knot)
        adjust(&nds.settings)
        return nds
    }

    /// An iPhone registered over HTTP with this push token.
    static func register(_ client: some TestClientProtocol, token: String) async throws -> DeviceRegistrationAnswer {
        let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(token)"}"#)
        try #require(created.status == .created, "\(created.text)")
        return try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: created.body))
    }

    static func claim(_ client: some TestClientProtocol, _ device: DeviceRegistrationAnswer, _ username: String, offer: String? = nil)
        async throws -> TestResponse
    {
        let offerField = offer.map { #","offer":"\#($0)""# } ?? ""
        return try await client.call(
            .post, "/api/v1/lnurlpay", key: device.deviceSecret,
            json: #"{"device_id":"\#(device.deviceID)","username":"\#(username)"\#(offerField)}"#)
    }

    /// A BOLT 12 offer written here (HeraldBolt12 reads it on the server): `offer_description`,
    /// `offer_absolute_expiry` when given, and the secp256k1 generator as `offer_issuer_id`; the
    /// TLV stream in bech32's 5-bit groups, without a checksum.
    static func offer(_ description: String, expiry: UInt64? = nil) -> String {
        func record(_ type: UInt8, _ value: [UInt8]) -> [UInt8] { [type, UInt8(value.count)] + value }
        var stream = record(10, Array(description.utf8))
        if let expiry { stream += record(14, withUnsafeBytes(of: expiry.bigEndian) { Array($0.drop { $0 == 0 }) }) }
        let generator = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
        stream += record(22, stride(from: 0, to: 66, by: 2).map { UInt8(generator.dropFirst($0).prefix(2), radix: 16)! })
        let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l")
        var groups = ""
        var (accumulator, bits) = (0, 0)
        for byte in stream {
            (accumulator, bits) = (accumulator << 8 | Int(byte), bits + 8)
            while bits >= 5 {
                bits -= 5
                groups.append(alphabet[(accumulator >> bits) & 31])
            }
        }
        if bits > 0 { groups.append(alphabet[(accumulator << (5 - bits)) & 31]) }
        return "lno1" + groups
    }

    /// The TTL knot answers the TXT record at `<name>.user.<zone>` with.
    static func ttl(_ knot: KnotServer, _ name: String) async throws -> UInt32? {
        try await DNSClient().query(try DNSName("\(name).user.\(knot.zone)"), type: .txt, server: knot.address, timeout: .seconds(5))
            .answers.first { $0.type == .txt }?.ttl
    }

    @Test(
        "claim, replace with a 566-character offer, rename, release, delete: each in knot's signed answers; an invalid offer changes nothing"
    )
    func lifecycle() async throws {
        #expect(Self.offers.long.count == 566)
        try await KnotServer.withRunning { knot in
            let nds = try Self.nds(knot)
            try await nds.app().test(.live) { client in
                let device = try await Self.register(client, token: "b353")

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
        }
    }

    @Test("a claim made while knot is down is published once it is back; a wrong TSIG key ends in a dead letter that says NOTAUTH")
    func unreachableAndRefused() async throws {
        try await KnotServer.withRunning { knot in
            let nds = try Self.nds(knot)
            try await nds.app().test(.live) { client in
                let device = try await Self.register(client, token: "b354")
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
                let device = try await Self.register(client, token: "b355")
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
        }
    }

    /// A request to a `herald serve` child, its status and JSON answer.
    static func http(_ method: String, _ url: String, bearer: String? = nil, json: String? = nil, session: URLSession = .shared)
        async throws -> (Int, [String: Any])
    {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let (body, response) = try await session.data(for: request)
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

    @Test(
        "an offer expiring in 120 s is published with a TTL of at most 120 under bip353.ttl 3600, also when sent 100 s late or renamed; one without expiry gets 3600"
    )
    func ttlCappedAtOfferLife() async throws {
        try await KnotServer.withRunning { knot in
            let nds = try Self.nds(knot) { $0.bip353?.ttl = 3600 }
            // The server's wall clock, moved ahead by hand; it runs on meanwhile, so retries come due.
            let skew = Skew()
            let expiring = Self.offer("expires soon", expiry: UInt64(skew.now().timeIntervalSince1970) + 120)
            let forever = Self.offer("never expires")
            try await nds.app(now: skew.now).test(.live) { client in
                let first = try await Self.register(client, token: "b357")
                let second = try await Self.register(client, token: "b358")

                #expect(try await Self.claim(client, first, "tina", offer: expiring).status == .created)
                try await Self.waitFor(knot, "tina", texts: ["bitcoin:?lno=" + expiring])
                let capped = try #require(try await Self.ttl(knot, "tina"))
                #expect(capped > 0 && capped <= 120, "TTL \(capped)")

                #expect(try await Self.claim(client, second, "ursula", offer: forever).status == .created)
                try await Self.waitFor(knot, "ursula", texts: ["bitcoin:?lno=" + forever])
                #expect(try await Self.ttl(knot, "ursula") == 3600)

                // Claimed again while knot is down, sent 100 s later: 20 s of the offer are left.
                let later = Self.offer("expires soon, again", expiry: UInt64(skew.now().timeIntervalSince1970) + 120)
                await knot.pause()
                let pending = try await Self.claim(client, first, "tina", offer: later)
                #expect(pending.status == .ok && pending.json["bip353_state"] as? String == "pending", "\(pending.json)")
                skew.advance(by: 100)
                try await knot.resume()
                try await Self.waitFor(knot, "tina", texts: ["bitcoin:?lno=" + later])
                let late = try #require(try await Self.ttl(knot, "tina"))
                #expect(late > 0 && late <= 20, "TTL \(late) for an offer with 20 s left")

                // Renamed 10 s later without a new offer: the record moves with what the offer has left.
                skew.advance(by: 10)
                #expect(try await Self.claim(client, first, "tina2").status == .ok)
                try await Self.waitFor(knot, "tina2", texts: ["bitcoin:?lno=" + later])
                let renamed = try #require(try await Self.ttl(knot, "tina2"))
                #expect(renamed > 0 && renamed <= 10, "TTL \(renamed) for an offer with 10 s left")
                #expect(try await Self.ttl(knot, "ursula") == 3600)
                #expect(try await eventually { try await nds.store.counts().pending == 0 })
                #expect(try await nds.store.counts().dead == 0)
            }
        }
    }

    @Test(
        "40 claims at once, 8 of them racing for one name: each name has one owner, the others 409 username_taken, each winner's record published once and as stored"
    )
    func concurrentClaims() async throws {
        try await KnotServer.withRunning { knot in
            let nds = try Self.nds(knot) { $0.registrationsPerMinute = 1000 }
            try await nds.app().test(.live) { client in
                var registered: [DeviceRegistrationAnswer] = []
                for index in 0..<40 { registered.append(try await Self.register(client, token: String(format: "a0%02x", index))) }
                let devices = registered
                // Devices 0–31 each claim their own name; 32–39 race for "zed". Every claim has its own offer.
                let usernames = (0..<40).map { $0 < 32 ? "solo\($0)" : "zed" }
                let offers = (0..<40).map { Self.offer("offer of device \($0)") }
                // Each answer's status and its body's text (JSON, kept as text: it crosses tasks).
                let answers = try await withThrowingTaskGroup(of: (Int, HTTPResponse.Status, String).self) { group in
                    for index in 0..<40 {
                        group.addTask {
                            let answer = try await Self.claim(client, devices[index], usernames[index], offer: offers[index])
                            return (index, answer.status, answer.text)
                        }
                    }
                    var answers: [Int: (status: HTTPResponse.Status, body: String)] = [:]
                    for try await (index, status, body) in group { answers[index] = (status, body) }
                    return answers
                }
                func field(_ index: Int, _ key: String) -> String? {
                    let body = answers[index].map { Data($0.body.utf8) } ?? Data()
                    return ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?[key] as? String
                }

                for index in 0..<32 {
                    #expect(
                        answers[index]?.status == .created && field(index, "bip353") == "₿solo\(index)@example.com", "\(answers[index]?.body ?? "")")
                }
                let winners = (32..<40).filter { answers[$0]?.status == .created }
                #expect(winners.count == 1, "\((32..<40).map { answers[$0]?.status })")
                for index in 32..<40 where !winners.contains(index) {
                    #expect(answers[index]?.status == .conflict && field(index, "error") == "username_taken", "\(answers[index]?.body ?? "")")
                }
                let winner = try #require(winners.first)

                // The store: one owner a name, no address and no record for the losers.
                for index in 0..<32 {
                    #expect(try await nds.store.lightningAddress(username: "solo\(index)")?.device.id == devices[index].deviceID)
                }
                #expect(try await nds.store.lightningAddress(username: "zed")?.device.id == devices[winner].deviceID)
                for index in 32..<40 where index != winner {
                    #expect(try await nds.store.lightningAddress(deviceID: devices[index].deviceID) == nil)
                    #expect(try await nds.store.bip353Record(deviceID: devices[index].deviceID) == nil)
                }

                // Knot: each name as the store holds it, the winner's offer under "zed".
                let names = (0..<32).map { "solo\($0)" } + ["zed"]
                let rows = Dictionary(uniqueKeysWithValues: try await nds.store.bip353Records(names: names).map { ($0.name, $0) })
                #expect(rows.count == 33)
                #expect(rows["zed"]?.deviceID == devices[winner].deviceID && rows["zed"]?.uri == "bitcoin:?lno=" + offers[winner])
                for name in names {
                    let row = try #require(rows[name])
                    try await Self.waitFor(knot, name, texts: [try #require(row.uri)])
                    #expect(try await Self.ttl(knot, name) == UInt32(row.ttl))
                }

                // Each winner's claim was one job, delivered once, and one UPDATE knot applied.
                #expect(try await eventually { try await nds.store.counts().pending == 0 })
                let counts = try await nds.store.counts()
                #expect(counts.delivered == 33 && counts.dead == 0 && counts.pending == 0, "\(counts)")
                #expect(try await nds.store.pendingCount() == 0)
                let applied = Self.updatesApplied(knot)
                #expect(applied == 33, "knot applied \(applied) updates:\n\(knot.log)")
            }
        }
    }

    @Test(
        "on PostgreSQL: 40 claims at once to herald serve, 8 racing for one name: one owner, 409 username_taken for the rest, 33 UPDATEs in knot, each published as claimed",
        .enabled(if: ThrowawayPostgres.isAvailable, "PostgreSQL 15 binaries")
    )
    func concurrentClaimsOnPostgres() async throws {
        let knot = try await KnotServer.start()
        let server: HeraldServeProcess
        do {
            let database = try await ThrowawayPostgres.shared.makeDatabase()
            var environment = ProcessInfo.processInfo.environment
            environment["HERALD_BIP353_TSIG_KEY_FILE"] = knot.keyFile.path
            environment["HERALD_REGISTRATIONS_PER_MINUTE"] = "1000"
            server = try await HeraldServeProcess.running(
                arguments: ["--bip353-server", knot.address.description, "--bip353-zone", knot.zone], database: database.url,
                environment: environment)
        } catch {
            await knot.stop()
            throw error
        }
        do {
            var registered: [(id: String, secret: String)] = []
            for index in 0..<40 {
                let (status, device) = try await Self.http(
                    "POST", server.baseURL + "/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(String(format: "b0%02x", index))"}"#)
                try #require(status == 201, "\(device)")
                registered.append((try #require(device["device_id"] as? String), try #require(device["device_secret"] as? String)))
            }
            let devices = registered
            let usernames = (0..<40).map { $0 < 32 ? "solo\($0)" : "zed" }
            let offers = (0..<40).map { Self.offer("offer of device \($0)") }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = 40
            let session = URLSession(configuration: configuration)
            let statuses = try await withThrowingTaskGroup(of: (Int, Int, String?).self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let (status, answer) = try await Self.http(
                            "POST", server.baseURL + "/api/v1/lnurlpay", bearer: devices[index].secret,
                            json: #"{"device_id":"\#(devices[index].id)","username":"\#(usernames[index])","offer":"\#(offers[index])"}"#,
                            session: session)
                        return (index, status, answer["error"] as? String)
                    }
                }
                var statuses: [Int: (status: Int, error: String?)] = [:]
                for try await (index, status, error) in group { statuses[index] = (status, error) }
                return statuses
            }
            #expect((0..<32).allSatisfy { statuses[$0]?.status == 201 }, "\(statuses)")
            let winners = (32..<40).filter { statuses[$0]?.status == 201 }
            #expect(winners.count == 1, "\(statuses)")
            #expect((32..<40).filter { !winners.contains($0) }.allSatisfy { statuses[$0]?.status == 409 && statuses[$0]?.error == "username_taken" })
            let winner = try #require(winners.first)

            // Each owner's record published under its name; the losers hold no name.
            for index in 0..<40 {
                let shown = try await Self.http(
                    "GET", server.baseURL + "/api/v1/lnurlpay?device_id=\(devices[index].id)", bearer: devices[index].secret)
                if index < 32 || index == winner {
                    try await Self.waitFor(knot, usernames[index], texts: ["bitcoin:?lno=" + offers[index]])
                    #expect(shown.1["bip353"] as? String == "₿\(usernames[index])@example.com")
                    #expect(
                        try await eventually {
                            try await Self.http(
                                "GET", server.baseURL + "/api/v1/lnurlpay?device_id=\(devices[index].id)", bearer: devices[index].secret
                            ).1["bip353_state"] as? String == "published"
                        })
                } else {
                    #expect(shown.0 == 404 && shown.1["error"] as? String == "no_username", "\(shown)")
                }
            }
            let applied = Self.updatesApplied(knot)
            #expect(applied == 33, "knot applied \(applied) updates:\n\(knot.log)")
        } catch {
            _ = await server.stop()
            await knot.stop()
            throw error
        }
        _ = await server.stop()
        await knot.stop()
    }

    /// How many UPDATE messages knot applied, from its log (`DDNS, processing N updates`).
    static func updatesApplied(_ knot: KnotServer) -> Int {
        knot.log.split(separator: "\n").reduce(0) { total, line in
            guard let range = line.range(of: "DDNS, processing ") else { return total }
            return total + (Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0)
        }
    }
}

/// `Date()` moved ahead by what a test adds: the server's wall clock, later than the real one.
final class Skew: Sendable {
    private let seconds = Mutex<TimeInterval>(0)
    func advance(by interval: TimeInterval) { seconds.withLock { $0 += interval } }
    var now: @Sendable () -> Date { { [self] in Date().addingTimeInterval(seconds.withLock { $0 }) } }
}
