import Foundation
import HeraldWire
import Testing

@Suite("Wallet backend events (seed 002)")
struct BackendEventRequestTests {
    /// Seed 002's data payloads, keyed by action, as the device receives them.
    static let seedPayloads: [String] = [
        #"{ "action": "NONE", "campaign_id": "", "campaign_name": "" }"#,
        #"{"action":"DEPOSIT_RECEIVED","campaign_id":"","campaign_name":"","transaction_id":"txn_<id>","amount":"100.00","asset":"USDC","network":"base"}"#,
        #"{"action":"DEPOSIT_CONFIRMED","campaign_id":"","campaign_name":"","transaction_id":"txn_<id>","amount":"100.00","asset":"USDC","network":"base"}"#,
        #"{"action":"WITHDRAWAL_INITIATED","campaign_id":"","campaign_name":"","transaction_id":"txn_<id>","amount":"50.00","asset":"USDC","destination":"0x..."}"#,
        #"{"action":"WITHDRAWAL_PROCESSED","campaign_id":"","campaign_name":"","transaction_id":"txn_<id>","amount":"50.00","asset":"USDC","status":"completed"}"#,
    ]

    @Test("an event built from each seed payload renders that payload exactly", arguments: seedPayloads)
    func seedRoundTrip(_ payload: String) throws {
        let seed = try JSONDecoder().decode([String: String].self, from: Data(payload.utf8))
        var custom = seed
        for key in BackendEventRequest.envelopeKeys { custom[key] = nil }
        let request = BackendEventRequest(
            action: BackendAction(rawValue: try #require(seed["action"])),
            data: custom.mapValues { .string($0) },
            notification: .init(title: "t", body: "b")
        )
        #expect(try request.pushData() == seed)
    }

    @Test("amounts are decimal strings", arguments: ["100", "100.00", "0.000001"])
    func decimals(_ amount: String) throws {
        let request = BackendEventRequest(
            action: .depositReceived,
            data: ["transaction_id": "t", "amount": .string(amount), "asset": "BTC", "network": "lightning"],
            notification: .init(title: "t", body: "b")
        )
        #expect(try request.pushData()["amount"] == amount)
    }

    @Test("other amounts are refused", arguments: ["", "1.", ".5", "1,00", "-1", "1e3", "١٠٠"])
    func notDecimals(_ amount: String) {
        let request = BackendEventRequest(
            action: .withdrawalInitiated,
            data: ["transaction_id": "t", "amount": .string(amount), "asset": "BTC", "destination": "bc1q"],
            notification: .init(title: "t", body: "b")
        )
        #expect(throws: BackendEventError.self) { try request.pushData() }
    }
}
