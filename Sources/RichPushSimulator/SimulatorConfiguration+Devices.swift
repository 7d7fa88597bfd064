import Foundation
package import RichPushCore

extension SimulatorConfiguration {
    /// Which devices a simulator runs: device `n` runs `cycle[n % cycle.count]`. iOS phones (the
    /// tutorial's app, platform `apns`), their Android twins (platform `fcm`, reading FCM data
    /// messages) and web devices (platform `webpush`, a browser's service worker).
    package struct Devices: Sendable, Hashable, RawRepresentable {
        package let cycle: [Platform]

        package static let apns = Devices(cycle: [.apns])
        package static let fcm = Devices(cycle: [.fcm])
        package static let webpush = Devices(cycle: [.webpush])
        /// Device 0, 2, 4… iOS; 1, 3, 5… Android.
        package static let mixed = Devices(cycle: [.apns, .fcm])
        /// Device 0, 3, 6… iOS; 1, 4, 7… Android; 2, 5, 8… web.
        package static let all = Devices(cycle: [.apns, .fcm, .webpush])

        /// The platforms a device simulator plays.
        package static let simulated: Set<Platform> = [.apns, .fcm, .webpush]

        package init(cycle: [Platform]) {
            precondition(!cycle.isEmpty && cycle.allSatisfy(Self.simulated.contains), "devices run apns, fcm or webpush")
            self.cycle = cycle
        }

        /// `mixed`, `all`, or a comma-separated list of `apns`, `fcm` and `webpush` taken in turn
        /// (`apns,webpush`: every other device a browser).
        package init?(rawValue: String) {
            switch rawValue {
            case "mixed": self = .mixed
            case "all": self = .all
            default:
                let names = rawValue.split(separator: ",", omittingEmptySubsequences: false)
                let platforms = names.compactMap { Platform(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
                guard !names.isEmpty, platforms.count == names.count, platforms.allSatisfy(Self.simulated.contains) else { return nil }
                self.init(cycle: platforms)
            }
        }

        package var rawValue: String {
            // Compared by cycle: `==` of a RawRepresentable compares raw values, which would recurse here.
            switch cycle {
            case Self.mixed.cycle: "mixed"
            case Self.all.cycle: "all"
            default: cycle.map(\.rawValue).joined(separator: ",")
            }
        }

        package static func == (lhs: Devices, rhs: Devices) -> Bool { lhs.cycle == rhs.cycle }
        package func hash(into hasher: inout Hasher) { hasher.combine(cycle) }

        package func platform(of index: Int) -> Platform { cycle[index % cycle.count] }

        /// Whether some device is a web device.
        package var hasWeb: Bool { cycle.contains(.webpush) }
    }
}
