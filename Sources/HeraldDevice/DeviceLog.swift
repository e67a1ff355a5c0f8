/// Where the plugin reports what it does: a closure the app wires to `os.Logger`, `Logcat` or a
/// file. The plugin logs nothing unless given one. Messages are fixed strings; values go in metadata.
public struct DeviceLog: Sendable {
    public enum Level: String, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error

        var rank: Int {
            switch self {
            case .debug: return 0
            case .info: return 1
            case .warning: return 2
            case .error: return 3
            }
        }

        public static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }
    }

    let sink: @Sendable (Level, String, [String: String]) -> Void

    public init(_ sink: @escaping @Sendable (Level, String, [String: String]) -> Void) { self.sink = sink }

    /// Discards everything.
    public static let none = DeviceLog { _, _, _ in }

    func callAsFunction(_ level: Level, _ message: String, _ metadata: [String: String] = [:]) {
        sink(level, message, metadata)
    }
}
