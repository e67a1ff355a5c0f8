import ArgumentParser
import Foundation
import HeraldPush
import HeraldServer
import HeraldStore
import HeraldWire

/// `herald dead-letters`: what `/api/v1/admin/dead-letters` does, on the database directly (a
/// running server's dispatcher finds replayed jobs within its safety poll, 5 s by default).
struct DeadLetters: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead-letters",
        abstract: "List, replay and purge dead letters (pushes the outbox gave up on).",
        subcommands: [List.self, Replay.self, Purge.self]
    )

    /// `--reason` and `--platform`, as the admin API's query parameters.
    struct Filter: ParsableArguments {
        @Option(help: "Only letters with this reason code (ttl_expired, permanent, max_attempts, token_unregistered …).")
        var reason: String?

        @Option(help: "Only letters for ios or android.")
        var platform: String?

        var isEmpty: Bool { reason == nil && platform == nil }

        /// Replay and purge take one letter by id or every match with --all, never both.
        func checkTarget(id: String?, all: Bool) throws {
            if (id == nil) == !all { throw ValidationError("give a dead letter id, or --all (with --reason/--platform to narrow it)") }
            if id != nil && !isEmpty { throw ValidationError("--reason and --platform go with --all") }
        }

        func parsed() throws -> DeadLetterFilter {
            var filter = DeadLetterFilter(reason: reason)
            if let platform {
                guard let parsed = JobDestination(rawValue: platform) else {
                    throw ValidationError("--platform must be ios or android, not '\(platform)'")
                }
                filter.destination = parsed
            }
            return filter
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print dead letters not yet replayed, newest first (tokens redacted), one per line."
        )

        @OptionGroup var filter: Filter

        @Option(help: "At most this many.")
        var limit: Int = 50

        @Option(help: "Continue after this cursor (printed last when more letters follow).")
        var cursor: String?

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
            let after = try cursor.map { text in
                guard let parsed = DeadLetterCursor(text: text) else { throw ValidationError("--cursor is not a cursor this command printed") }
                return parsed
            }
            let chosen = try filter.parsed()
            let page = try await options.withStore { [limit] in try await $0.deadLetters(matching: chosen, limit: limit, after: after) }
            for letter in page.letters {
                let fields = [
                    letter.id, letter.reason, letter.destination.rawValue, redact(letter.token), letter.notificationType,
                    "attempts=\(letter.attempts)", "dead \(letter.finishedAt.formatted(.iso8601))",
                    letter.tokenDead ? "token dead" : "", letter.providerAnswer.map { "answer: \($0)" } ?? "",
                ]
                print(fields.joined(separator: "\t"))
            }
            if let next = page.next {
                FileHandle.standardError.write(Data("more: --cursor \(next.text)\n".utf8))
            }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enqueue dead letters again as new jobs: one by id, or every match with --all.",
            discussion: "A letter replayed before is not replayed again; letters for dead tokens are refused."
        )

        @Argument(help: "The dead letter's id (as `list` prints it).")
        var id: String?

        @Flag(help: "Replay every letter matching --reason/--platform (all of them without).")
        var all = false

        @OptionGroup var filter: Filter

        @Option(help: "With --all: at most this many.")
        var limit: Int = 1_000

        @OptionGroup var options: DatabaseOptions

        func validate() throws {
            try filter.checkTarget(id: id, all: all)
        }

        func run() async throws {
            let plan = DeadLetterReplay.plan(now: Date())
            if let id {
                switch try await options.withStore({ [id] in try await $0.replayDeadLetter(id: id, plan: plan) }) {
                case .replayed(let job): print("replayed \(id) as \(job)")
                case .alreadyReplayed(let job): print("\(id) was replayed before, as \(job); nothing new")
                case .tokenDead:
                    FileHandle.standardError.write(Data("\(id): its push token is dead; not replayed\n".utf8))
                    throw ExitCode.failure
                case .notFound:
                    FileHandle.standardError.write(Data("no dead letter \(id)\n".utf8))
                    throw ExitCode.failure
                }
            } else {
                let chosen = try filter.parsed()
                let result = try await options.withStore { [limit] in
                    try await $0.replayDeadLetters(matching: chosen, limit: limit, plan: plan)
                }
                print("replayed \(result.jobIDs.count); skipped \(result.skippedTokenDead) with dead tokens")
            }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete dead letters: one by id, or every match with --all (replayed ones too)."
        )

        @Argument(help: "The dead letter's id.")
        var id: String?

        @Flag(help: "Delete every letter matching --reason/--platform (all of them without).")
        var all = false

        @OptionGroup var filter: Filter

        @OptionGroup var options: DatabaseOptions

        func validate() throws {
            try filter.checkTarget(id: id, all: all)
        }

        func run() async throws {
            if let id {
                guard try await options.withStore({ [id] in try await $0.purgeDeadLetter(id: id) }) else {
                    FileHandle.standardError.write(Data("no dead letter \(id)\n".utf8))
                    throw ExitCode.failure
                }
                print("purged \(id)")
            } else {
                let chosen = try filter.parsed()
                let purge = try await options.withStore { try await $0.purgeDeadLetters(matching: chosen) }
                // `list` shows only letters not yet replayed; the purge takes the replayed ones too.
                print(
                    "purged \(purge.purged) dead letter\(purge.purged == 1 ? "" : "s") matching the filter, \(purge.replayed) of them replayed before"
                )
            }
        }
    }
}
