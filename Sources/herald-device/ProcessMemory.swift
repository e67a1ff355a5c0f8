import Foundation

/// With `HERALD_DEVICE_MEMORY=1`, prints the process's peak resident size (VmHWM) and its
/// private dirty memory at exit to standard error: the figures an extension is judged by.
enum ProcessMemory {
    static func reportIfAsked() {
        guard ProcessInfo.processInfo.environment["HERALD_DEVICE_MEMORY"] == "1" else { return }
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let rollup = (try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8)) ?? ""
        let peak = field("VmHWM", in: status) ?? "?"
        let resident = field("VmRSS", in: status) ?? "?"
        let dirty = field("Private_Dirty", in: rollup) ?? "?"
        FileHandle.standardError.write(Data("memory: peak_rss=\(peak) rss=\(resident) private_dirty=\(dirty)\n".utf8))
    }

    static func field(_ name: String, in text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
