import Foundation

// herald-device: the device plugin alone, as an extension would carry it.

let usage = """
    usage:
      herald-device handle <push.json|->   run the plugin on one push; prints one JSON object
      herald-device listen --server URL [--platform ios|android|webpush] [--token T] [--max-pushes N]
                           [--api-key KEY]
                                           register with a local NDS and handle its pushes; a server in
                                           registration: key needs a devices key (or HERALD_API_KEY)
      herald-device listen --server URL --wake-gateway [--topics blocktank.*,…] [--platform ios|android] [--api-key KEY]
                                           the same as a bitkit-core app with Herald as its wake gateway:
                                           register at URL/wake with an ln: proof, open wakes, ack them
      herald-device app                    play the main app: hold the wallet, answer pings
      herald-device wallet settle <hash>   mark a development-wallet invoice paid
      herald-device wallet invoices        list the development wallet's invoices
      herald-device wallet node-id         the node id its invoices are signed by
      herald-device lsp set <node id>      the LSP whose LSPS5 notifications wake this phone
      herald-device nwc connect --relay wss://… [--relay …]
                                           an NWC connection to the development wallet, registered with
                                           the NDS; its requests wake the phone, which answers get_info
                                           and get_balance on the relays
    options:
      --wallet DIR      the development wallet's folder (default ./.herald-device)
      --container DIR   the shared container (default: the wallet folder)
      --budget SECONDS  the time allowed per push (default 25)
      --verbose         log to standard error
    """

func main() async -> Int32 {
    do {
        let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
        switch arguments.positional.first {
        case "handle": return try await HandleCommand.run(arguments)
        case "listen": return try await ListenCommand.run(arguments)
        case "app": return try await AppCommand.run(arguments)
        case "wallet": return try await WalletCommand.run(arguments)
        case "lsp": return try await LSPCommand.run(arguments)
        case "nwc": return try await NwcCommand.run(arguments)
        case nil where arguments.flags.contains("help"), "help":
            print(usage)
            return 0
        default:
            throw UsageError("unknown command")
        }
    } catch let error as UsageError {
        FileHandle.standardError.write(Data("herald-device: \(error.message)\n\(usage)\n".utf8))
        return 64
    } catch {
        FileHandle.standardError.write(Data("herald-device: \(error)\n".utf8))
        return 1
    }
}

let status = await main()
ProcessMemory.reportIfAsked()
exit(status)
