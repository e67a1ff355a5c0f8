import Foundation

/// The record as a JSON file in the shared container, read and written under a file lock and
/// replaced atomically, so the app never reads half a file.
public struct ContainerRecordStore: Sendable {
    public let fileURL: URL
    let clock: DeviceClock

    /// The usual file name inside the shared container.
    public static let fileName = "herald-record.json"

    public init(fileURL: URL, clock: DeviceClock = .continuous) {
        self.fileURL = fileURL
        self.clock = clock
    }

    /// The store at the usual name inside a container directory.
    public init(container: URL, clock: DeviceClock = .continuous) {
        self.init(fileURL: container.appendingPathComponent(Self.fileName), clock: clock)
    }

    /// The record; an empty one if the file does not exist yet.
    public func read() throws -> ContainerRecord {
        guard let data = try? Data(contentsOf: fileURL) else { return ContainerRecord() }
        return try Self.decoder().decode(ContainerRecord.self, from: data)
    }

    /// Reads, changes and writes the record while holding the lock (at most `timeout` to get it).
    @discardableResult
    public func update(within timeout: Duration = .seconds(1), _ change: @Sendable (inout ContainerRecord) -> Void) async throws -> ContainerRecord {
        let lock = try FileLock(path: fileURL.path + ".lock")
        guard try await lock.lock(within: timeout, clock: clock) else {
            throw POSIXFailure(operation: "lock \(fileURL.path)", code: EWOULDBLOCK)
        }
        defer { lock.unlock() }
        // A damaged file is replaced rather than blocking every later push.
        var record = (try? read()) ?? ContainerRecord()
        change(&record)
        record.updatedAt = Date()
        let data = try Self.encoder().encode(record)
        try data.write(to: fileURL, options: .atomic)
        return record
    }

    /// Empties the lists the app has shown; counters and timings stay.
    public func clearShown() async throws {
        try await update { record in
            record.receipts = []
            record.pending = []
        }
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
