import Foundation
import HeraldDevice

/// `herald-device wallet settle <payment_hash>` and `wallet invoices`: the development wallet's controls.
enum WalletCommand {
    static func run(_ arguments: Arguments) async throws -> Int32 {
        let environment = try DeviceEnvironment(arguments)
        let wallet = DevelopmentWallet(folder: environment.walletFolder)
        let words = Array(arguments.positional.dropFirst())
        switch words.first {
        case "settle":
            guard words.count == 2 else { throw UsageError("wallet settle needs a payment hash") }
            let settled = try await wallet.settle(paymentHash: words[1])
            printJSON(["payment_hash": words[1], "settled": settled ? "true" : "unknown invoice"])
            return settled ? 0 : 1
        case "invoices":
            printJSON(try await wallet.invoices())
            return 0
        default:
            throw UsageError("wallet takes settle <payment_hash> or invoices")
        }
    }
}
