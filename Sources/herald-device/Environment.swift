import Foundation
import HeraldBolt11
import HeraldDevelopmentInvoices
import HeraldDevice

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The pieces every command builds the plugin from, read from the shared options.
struct DeviceEnvironment {
    let walletFolder: URL
    let container: URL
    let budget: Duration
    let verbose: Bool

    init(_ arguments: Arguments) throws(UsageError) {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        walletFolder = arguments.option("wallet").map { URL(fileURLWithPath: $0) } ?? cwd.appendingPathComponent(".herald-device")
        container = arguments.option("container").map { URL(fileURLWithPath: $0) } ?? walletFolder
        budget = try arguments.seconds("budget") ?? .seconds(25)
        verbose = arguments.flags.contains("verbose")
    }

    func makeFolders() throws {
        try FileManager.default.createDirectory(at: walletFolder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    }

    var log: DeviceLog {
        guard verbose else { return .none }
        return DeviceLog { level, message, metadata in
            let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            FileHandle.standardError.write(Data("[\(level.rawValue)] \(message) \(fields)\n".utf8))
        }
    }

    /// Regtest BOLT11 invoices signed with the node key in the wallet's folder (made on first use).
    func invoiceIssuer() throws -> Bolt11InvoiceIssuer {
        try Bolt11InvoiceIssuer(folder: walletFolder)
    }

    /// The development wallet, issuing its invoices through ``invoiceIssuer()``.
    func wallet() throws -> DevelopmentWallet {
        DevelopmentWallet(folder: walletFolder, issuer: try invoiceIssuer(), nwc: try NwcResponder(folder: walletFolder))
    }

    /// - Parameter wakeAcks: Where wakes are acknowledged (`listen`, which holds a registration).
    func plugin(wakeAcks: WakeAckTarget? = nil) throws -> DevicePlugin {
        try makeFolders()
        var configuration = DevicePluginConfiguration(budget: budget)
        configuration.wakeAcks = wakeAcks
        return DevicePlugin(
            wallet: try wallet(),
            transport: URLSessionReplyTransport(),
            configuration: configuration,
            record: ContainerRecordStore(container: container),
            coordinator: try POSIXAppExtensionCoordinator(container: container),
            log: log
        )
    }
}

/// Writes one JSON value as a line on standard output.
func printJSON<T: Encodable>(_ value: T) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}
