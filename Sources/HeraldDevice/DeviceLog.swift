/// Where the plugin reports what it does: a closure the app wires to `os.Logger`, `Logcat` or a
/// file. The plugin logs nothing unless given one. Messages are fixed strings; values go in metadata.
public struct DeviceLog: Sendable {
    public enum Level: String, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error

        public static func < (a: Level, b: Level) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    let sink: @Sendable (Level, String, [String: String]) -> Void

    public init(_ sink: @escaping @Sendable (Level, String, [String: String]) -> Void) { self.sink = sink }

    /// Discards everything.
    public static let none = DeviceLog { _, _, _ in }

    func callAsFunction(_ level: Level, _ message: String, _ metadata: [String: String] = [:]) {
        sink(level, message, metadata)
    }
}
