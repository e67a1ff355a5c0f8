import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("The shared-container record")
struct ContainerRecordTests {
    @Test("counters, handling time, receipts and pending items are written for the app")
    func countersAndItems() async throws {
        let container = try Fixtures.temporaryDirectory()
        let store = ContainerRecordStore(container: container)
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet()
            await wallet.setPayment(
                WalletPayment(paymentHash: "ph", direction: .incoming, status: .complete, amountMsat: 21_000, preimage: "p", invoice: "lnbc"),
                hash: "ph")
            let plugin = Fixtures.plugin(wallet: wallet, record: store)
            _ = await plugin.handle(
                json: Fixtures.apnsPush(type: .lnurlpayInvoice, payload: ["amount": 21_000, "reply_url": .string(server.url("/i"))]))
            _ = await plugin.handle(
                json: Fixtures.apnsPush(type: .lnurlpayVerify, payload: ["payment_hash": "ph", "reply_url": .string(server.url("/v"))]))
            _ = await plugin.handle(json: Data("garbage".utf8))
        }
        let record = try store.read()
        #expect(record.counters.received == 3)
        #expect(record.counters.handled == 2 && record.counters.fellBack == 1 && record.counters.replied == 2)
        #expect(record.handlingTime.count == 3 && record.handlingTime.maxMilliseconds >= record.handlingTime.lastMilliseconds)
        #expect(record.receipts.map(\.id) == ["ph"] && record.receipts.first?.amount == "21000")
        // The invoice the RecordingWallet issues has another hash, so it is still pending.
        #expect(record.pending.map(\.kind) == [.issuedInvoice])

        let raw = try JSONSerialization.jsonObject(with: Data(contentsOf: store.fileURL)) as? [String: Any]
        let counters = raw?["counters"] as? [String: Int]
        #expect(counters?["fell_back"] == 1)
    }

    @Test("the record is replaced atomically and survives concurrent writers")
    func concurrentWriters() async throws {
        let container = try Fixtures.temporaryDirectory()
        let store = ContainerRecordStore(container: container)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { _ = try? await store.update(within: .seconds(5)) { $0.counters.received += 1 } }
            }
        }
        #expect(try store.read().counters.received == 20)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: container.path).filter { !$0.hasPrefix(ContainerRecordStore.fileName) }
        #expect(leftovers.isEmpty)
    }

    @Test("lists are capped and the app can clear what it showed")
    func capAndClear() async throws {
        let store = ContainerRecordStore(container: try Fixtures.temporaryDirectory())
        try await store.update { record in
            for index in 0..<150 {
                record.apply(.pending(PendingItem(kind: .incomingPayment, id: "p\(index)", createdAt: Date())))
            }
        }
        let record = try store.read()
        #expect(record.pending.count == ContainerRecord.listLimit && record.pending.first?.id == "p50")
        try await store.clearShown()
        #expect(try store.read().pending.isEmpty)
    }
}
