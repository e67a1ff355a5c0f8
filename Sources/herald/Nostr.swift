import ArgumentParser
import Foundation
import HeraldNostr
import HeraldWire

/// `herald nostr`: the key zap receipts are signed with.
struct Nostr: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nostr",
        abstract: "Zaps (NIP-57): make the Nostr key receipts are signed with.",
        subcommands: [Keygen.self]
    )

    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new Nostr secret key (hex, owner-only) and print its public key.",
            discussion: """
                Point nostr.secret_key_file (HERALD_NOSTR_SECRET_KEY_FILE) at the file to turn zaps on.
                The public key printed is the nostrPubkey every Lightning address advertises; payers'
                clients check zap receipts against it, so keep the key.
                """
        )

        @Option(help: "Where to write the key.")
        var out: String

        @Flag(help: "Replace an existing file.")
        var force = false

        func run() throws {
            if !force, FileManager.default.fileExists(atPath: out) {
                throw ValidationError("\(out) exists; pass --force to replace it (receipts would then be signed by another key)")
            }
            let (key, hex) = NostrSecretKey.generate()
            try OwnerOnlyFile.write(Data((hex + "\n").utf8), to: URL(fileURLWithPath: out))
            print(key.publicKeyHex)
            FileHandle.standardError.write(Data("wrote \(out); the line above is its public key (nostrPubkey)\n".utf8))
        }
    }
}
