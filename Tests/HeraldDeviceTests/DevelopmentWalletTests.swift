import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("The development wallet keeps real state in its folder")
struct DevelopmentWalletTests {
    @Test("invoices, amounts and settled flags persist across instances")
    func persists() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let wallet = DevelopmentWallet(folder: folder)
        try await wallet.connect()
        let invoice = try await wallet.receive(ReceiveRequest(amountMsat: 21_000, description: "[]", descriptionHash: true))
        #expect(invoice.bolt11.hasPrefix("lndev21000"))
        #expect(try await wallet.payment(hash: invoice.paymentHash)?.isSettled == false)

        let other = DevelopmentWallet(folder: folder)
        #expect(try await other.settle(paymentHash: invoice.paymentHash))
        try await wallet.sync()
        let payment = try #require(try await wallet.payment(hash: invoice.paymentHash))
        #expect(payment.isSettled && payment.amountMsat == 21_000 && payment.preimage?.count == 64 && payment.invoice == invoice.bolt11)
        #expect(try await other.settle(paymentHash: "unknown") == false)
    }

    @Test("amounts outside the limits are refused with a payer-readable reason")
    func limits() async throws {
        let wallet = DevelopmentWallet(folder: try Fixtures.temporaryDirectory(), limits: ReceiveLimits(minMsat: 1_000, maxMsat: 10_000))
        await #expect(throws: WalletError.self) {
            try await wallet.receive(ReceiveRequest(amountMsat: 20_000, description: "", descriptionHash: false))
        }
    }
}
