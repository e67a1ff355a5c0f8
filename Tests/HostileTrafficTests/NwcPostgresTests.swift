import Foundation
import HeraldNostr
import HeraldSecp256k1
import HeraldTestSupport
import HeraldWire
import Testing

/// NWC on several instances (issue 36): both watch the relay, the store's claim makes one push
/// per request, and when one is killed the other goes on.
@Suite("NWC on two instances", .serialized)
struct NwcPostgresTests {
    @Test("two instances on PostgreSQL: one holds the wallet's subscription under a lease, and the other takes over within it after kill -9")
    func twoInstances() async throws {
        let certificate = try TestCertificate.make()
        let relay = MockNostrRelay(certificate: certificate)
        let caFile = try certificate.writeCAToTemporaryFile()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        for variable in ["GOOGLE_APPLICATION_CREDENTIALS", "HTTPS_PROXY", "https_proxy"] { environment[variable] = nil }
        environment["HERALD_TLS_CA_FILE"] = caFile
        environment["HERALD_NOSTR_ALLOW_PRIVATE_RELAYS"] = "true"
        // One public URL for the deployment, as behind a load balancer.
        environment["HERALD_PUBLIC_URL"] = "http://nds.test"
        try await relay.withRunning { running in
            let database = try await ThrowawayPostgres.shared.makeDatabase()
            let lease = ["--lease-seconds", "3"]
            let a = try await ServerProcess.running(
                arguments: ServerProcess.liftedTargetLimits + lease, database: database.url, environment: environment)
            let device = try await RegisteredDevice.register(port: a.port, token: "fcm-nwc-two-instances")
            let node = NodeSecretKey.random()
            let service = NostrSecretKey.generate().key
            let app = NostrSecretKey.generate().key
            let webhook = "http://nds.test" + device.webhookPath
            let message = "\(webhook)-\(service.publicKeyHex)-\(app.publicKeyHex)-[\(running.relayURL)]"
            let body =
                #"{"webhookUrl":"\#(webhook)","walletServicePubkey":"\#(service.publicKeyHex)","appPubkey":"\#(app.publicKeyHex)","relays":["\#(running.relayURL)"],"signature":"\#(LightningMessageSignature.sign(message, with: node))"}"#
            let registered = await RawHTTP.exchange(
                port: a.port, request: .post("/nwc/\(node.nodeID.hex)", body: Array(body.utf8)), timeout: .seconds(10))
            #expect(registered.statuses == [200], "\(registered)")
            _ = try await relay.subscriptions.waitFor(count: 1, timeout: .seconds(20))
            let b = try await ServerProcess.running(
                arguments: ServerProcess.liftedTargetLimits + lease, database: database.url, environment: environment)
            // B has read the registrations (its relay gauge is set) and left the wallet to A, which holds its lease.
            #expect(
                await eventually(timeout: .seconds(20)) {
                    let metrics = await RawHTTP.exchange(port: b.port, request: .get("/metrics"), timeout: .seconds(5))
                    return metrics.bodies.first?.contains("herald_nwc_relays 0") == true
                })
            #expect(await relay.openSubscriptions() == 1)

            func request(_ method: String) throws -> NostrEvent {
                let key = try NIP44.conversationKey(secret: app, publicKeyHex: service.publicKeyHex)
                return NostrEvent.signed(
                    kind: NwcKind.request, tags: [["p", service.publicKeyHex]],
                    content: try NIP44.encrypt(#"{"method":"\#(method)"}"#, conversationKey: key),
                    createdAt: Int64(Date().timeIntervalSince1970), by: app)
            }
            await relay.publish(Data(try request("get_balance").json.utf8))
            #expect(await eventually(timeout: .seconds(20)) { ((try? await device.deliveredPushCount(port: b.port)) ?? 0) >= 1 })

            // A killed: B takes the lease over once it runs out (3 s) and subscribes.
            await a.crash()
            let killed = ContinuousClock.now
            _ = try await relay.subscriptions.waitFor(count: 2, timeout: .seconds(20))
            print("nwc: take-over \(ContinuousClock.now - killed) after kill -9 (lease 3 s)")
            await relay.publish(Data(try request("get_info").json.utf8))
            #expect(await eventually(timeout: .seconds(20)) { ((try? await device.deliveredPushCount(port: b.port)) ?? 0) >= 2 })
            #expect(try await device.deliveredPushCount(port: b.port) == 2)
            await b.stop()
        }
    }
}
