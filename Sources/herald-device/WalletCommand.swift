import Foundation
import HeraldDevelopmentInvoices

/// `herald-device wallet settle <payment_hash>`, `wallet invoices` and `wallet node-id`: the
/// development wallet's controls.
enum WalletCommand {
    static func run(_ arguments: Arguments) async throws -> Int32 {
        let environment = try DeviceEnvironment(arguments)
        let words = Array(arguments.positional.dropFirst())
        switch words.first {
        case "settle":
            guard words.count == 2 else { throw UsageError("wallet settle needs a payment hash") }
            let settled = try await environment.wallet().settle(paymentHash: words[1])
            printJSON(Settled(paymentHash: words[1], settled: settled, error: settled ? nil : "unknown invoice"))
            return settled ? 0 : 1
        case "invoices":
            printJSON(try await environment.wallet().invoices())
            return 0
        case "node-id":
            // What a payer's decoder recovers from every invoice's signature.
            printJSON(["node_id": try environment.invoiceIssuer().nodeID.hex])
            return 0
        default:
            throw UsageError("wallet takes settle <payment_hash>, invoices or node-id")
        }
    }

    /// `wallet settle`'s answer: `settled` a boolean, as a script reads it.
    struct Settled: Encodable {
        var paymentHash: String
        var settled: Bool
        var error: String?
        enum CodingKeys: String, CodingKey {
            case paymentHash = "payment_hash"
            case settled, error
        }
    }
}
