import ArgumentParser
import Foundation
import HeraldStore
import Logging

/// `herald keys`: the API keys wallet backends call the sessions and events endpoints with.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create, list and revoke API keys for wallet backends.",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key and print its secret (shown once; only its hash is stored)."
        )

        @Option(help: "A name for the key (which backend holds it); the scopes when not given.")
        var name: String?

        @Option(help: "Comma-separated scopes: sessions, events, wake, devices, admin (admin allows everything).")
        var scopes: String

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            let parsed: Set<APIScope>
            do {
                parsed = try APIScope.parseList(scopes)
            } catch {
                throw ValidationError(error.description)
            }
            // `herald keys create --scopes devices`, as the docs and the dashboard write it, works:
            // the key is named for what it may do.
            let name = self.name ?? parsed.map(\.rawValue).sorted().joined(separator: "+")
            guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("--name must not be empty")
            }
            let (created, location) = try await options.withStore(creating: true) { [name] store in
                (try await store.createAPIKey(name: name, scopes: parsed, now: Date()), store.location)
            }
            // The database first, so a key made for the wrong one shows at once; the secret last,
            // the one line on standard output, whatever reads it.
            FileHandle.standardError.write(
                Data(
                    "created \(created.key.id) '\(name)' with scopes \(Keys.describe(parsed)) in \(location); the secret below is not shown again\n"
                        .utf8
                )
            )
            print(created.secret)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List keys (never their secrets).")

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            for key in try await options.withStore({ try await $0.apiKeys() }) {
                let state = key.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active"
                print("\(key.id)\t\(key.name)\t\(Keys.describe(key.scopes))\tcreated \(key.createdAt.formatted(.iso8601))\t\(state)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key: its next request gets 401.")

        @Argument(help: "The key id (key_…), as `herald keys list` shows it.")
        var id: String

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            guard try await options.withStore({ [id] in try await $0.revokeAPIKey(id: id, now: Date()) }) else {
                FileHandle.standardError.write(Data("no key with id \(id) (see `herald keys list`)\n".utf8))
                throw ExitCode.failure
            }
            print("revoked \(id)")
        }
    }

    static func describe(_ scopes: Set<APIScope>) -> String {
        scopes.sorted().map(\.rawValue).joined(separator: ",")
    }
}
