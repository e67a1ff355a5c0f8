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

/// Strangers against a device's BIP-353 name, in each registration mode, against knot.
extension Bip353Tests {
    /// Every job the store holds, whatever its state.
    static func allJobs(_ nds: TestNDS) async throws -> Int {
        let counts = try await nds.store.counts()
        return counts.pending + counts.delivered + counts.dead
    }

    @Test(
        "strangers in each registration mode (open, challenge, key): a wrong, missing or other device's secret (or a devices key) claims, replaces, renames and releases nothing; an unconfirmed device publishes no offer; knot and the store keep the owner's record and no DNS job is made"
    )
    func strangersInEachMode() async throws {
        try await KnotServer.withRunning { knot in
            for mode in RegistrationMode.allCases { try await Self.strangers(knot, mode: mode) }
        }
    }

    static func strangers(_ knot: KnotServer, mode: RegistrationMode) async throws {
        let nds = try Self.nds(knot) { $0.registration = mode }
        let devicesKey = try await nds.apiKey([.devices])
        let (name, strangerName) = ("owner-\(mode.rawValue)", "stranger-\(mode.rawValue)")
        let published = ["bitcoin:?lno=" + Self.offers.short]
        try await nds.app().test(.live) { client in
            func register(_ token: String) async throws -> DeviceRegistrationAnswer {
                let registration = #"{"platform":"ios","push_token":"\#(token)"}"#
                if mode == .key {
                    let anonymous = try await client.post("/api/v1/devices", json: registration)
                    #expect(anonymous.status == .unauthorized && anonymous.json["error"] as? String == "unauthorized", "\(anonymous.text)")
                }
                let made = try await client.post(
                    "/api/v1/devices", json: registration, headers: mode == .key ? [.authorization: "Bearer \(devicesKey)"] : [:])
                #expect(made.status == .created, "\(made.text)")
                return try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: made.body))
            }
            let owner = try await register("b3a1")
            if mode == .challenge {
                // Unconfirmed: no name, no record, no DNS job; only the challenge went out.
                let early = try await Self.claim(client, owner, name, offer: Self.offers.short)
                #expect(early.status == .forbidden && early.json["error"] as? String == "device_unconfirmed", "\(early.text)")
                #expect(try await nds.store.bip353Record(deviceID: owner.deviceID) == nil)
                #expect(try await nds.store.bip353Records(names: [name]).isEmpty)
                #expect(try await nds.store.lightningAddress(username: name) == nil)
                #expect(try await Self.allJobs(nds) == 1)
                #expect(try await Self.txt(knot, name).code == .nameError)
                try await OneWayToAPhoneTests.confirm(client, nds, .ios, "b3a1")
            }
            let claimed = try await Self.claim(client, owner, name, offer: Self.offers.short)
            #expect(claimed.status == .created, "\(claimed.text)")
            try await Self.waitFor(knot, name, texts: published)

            let stranger = try await register("b3a2")
            if mode == .challenge { try await OneWayToAPhoneTests.confirm(client, nds, .ios, "b3a2") }
            #expect(try await eventually { try await nds.store.counts().pending == 0 })
            let record = try #require(try await nds.store.bip353Record(deviceID: owner.deviceID))
            let jobs = try await Self.allJobs(nds)

            // The stranger's own secret on the owner's name: taken.
            let taken = try await Self.claim(client, stranger, name, offer: Self.offers.long)
            #expect(taken.status == .conflict && taken.json["error"] as? String == "username_taken", "\(taken.text)")
            // The owner's device id with anything but its secret: a replaced offer, a rename, a release, a deletion.
            var keys: [String?] = [stranger.deviceSecret, nil, "not-a-secret"]
            if mode == .key { keys.append(devicesKey) }
            for key in keys {
                for body in [
                    #"{"device_id":"\#(owner.deviceID)","username":"\#(name)","offer":"\#(Self.offers.long)"}"#,
                    #"{"device_id":"\#(owner.deviceID)","username":"\#(strangerName)","offer":"\#(Self.offers.long)"}"#,
                    #"{"device_id":"\#(owner.deviceID)","username":"\#(strangerName)"}"#,
                ] {
                    let refused = try await client.call(.post, "/api/v1/lnurlpay", key: key, json: body)
                    #expect(refused.status == .unauthorized && refused.json["error"] as? String == "unauthorized", "\(refused.text)")
                }
                let released = try await client.call(.delete, "/api/v1/lnurlpay?device_id=\(owner.deviceID)", key: key)
                #expect(released.status == .unauthorized && released.json["error"] as? String == "unauthorized", "\(released.text)")
                let releasedByBody = try await client.call(.delete, "/api/v1/lnurlpay", key: key, json: #"{"device_id":"\#(owner.deviceID)"}"#)
                #expect(releasedByBody.status == .unauthorized && releasedByBody.json["error"] as? String == "unauthorized")
                let deleted = try await client.call(.delete, "/api/v1/devices/\(owner.deviceID)", key: key)
                #expect(deleted.status == .unauthorized && deleted.json["error"] as? String == "unauthorized", "\(deleted.text)")
            }
            // Nothing changed: the same record and job, no new job, no stranger's name, knot as it was.
            let held = try await nds.store.bip353Record(deviceID: owner.deviceID)
            #expect(held == record, "\(mode): \(String(describing: held)), was \(record)")
            #expect(try await nds.store.bip353Records(names: [strangerName]).isEmpty)
            let strangers = try await nds.store.bip353Record(deviceID: stranger.deviceID)
            #expect(strangers == nil, "\(mode): \(String(describing: strangers))")
            #expect(try await nds.store.lightningAddress(username: name)?.device.id == owner.deviceID)
            #expect(try await Self.allJobs(nds) == jobs)
            let answered = try await Self.txt(knot, name)
            #expect(answered.texts == published, "\(mode): \(answered)")
            #expect(try await Self.txt(knot, strangerName).code == .nameError)

            if mode == .challenge {
                // The owner's secret moves it to a new token: unconfirmed again, it replaces no offer.
                let moved = try await client.call(
                    .put, "/api/v1/devices/\(owner.deviceID)", key: owner.deviceSecret, json: #"{"platform":"ios","push_token":"b3a3"}"#)
                #expect(moved.status == .ok && moved.json["confirmed"] as? Bool == false, "\(moved.text)")
                #expect(try await eventually { try await nds.store.counts().pending == 0 })
                let unconfirmed = try await Self.claim(client, owner, name, offer: Self.offers.long)
                #expect(unconfirmed.status == .forbidden && unconfirmed.json["error"] as? String == "device_unconfirmed")
                #expect(try await nds.store.bip353Record(deviceID: owner.deviceID) == record)
                #expect(try await Self.allJobs(nds) == jobs + 1)  // the new token's challenge
                #expect(try await Self.txt(knot, name).texts == published)
            }
        }
    }
}
