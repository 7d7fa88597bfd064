import RichPushSimulator
import Testing

@Suite struct DevicePopulationTests {
    @Test func sharesFollowTheWeightsAndTheSeed() throws {
        let population = try DevicePopulation(parsing: "foreground=20, background=50,force-quit=10,offline=10,doze=10")
        var counts: [DeviceCondition: Int] = [:]
        for index in 0..<10_000 { counts[population.condition(of: index, seed: 7), default: 0] += 1 }
        #expect((1800...2200).contains(counts[.foreground] ?? 0))
        #expect((4700...5300).contains(counts[.background] ?? 0))
        for condition in [DeviceCondition.forceQuit, .offline, .doze] { #expect((850...1150).contains(counts[condition] ?? 0)) }
        #expect(counts[.lowPower] == nil && counts[.suspended] == nil)
        // The same seed gives the same devices; another seed others.
        let again = (0..<200).map { population.condition(of: $0, seed: 7) }
        #expect(again == (0..<200).map { population.condition(of: $0, seed: 7) })
        #expect(again != (0..<200).map { population.condition(of: $0, seed: 8) })
    }

    @Test func aJSONObjectReadsAsThePairs() throws {
        let json = try DevicePopulation(parsing: #"{"background": 3, "low-power": 1}"#)
        #expect(json == (try DevicePopulation(parsing: "background=3,low-power=1")))
        #expect(json.description == "background=75%,low-power=25%")
    }

    @Test func badPopulationsAreRefusedWithTheReason() {
        for (text, words) in [
            ("sleeping=3", "unknown device condition"), ("background", "not condition=weight"), ("background=x", "not a number"),
            ("background=0", "above 0"), ("background=-1", "from 0"), ("background=1,background=2", "named twice"),
            (#"{"background": "a lot"}"#, "not a number"), ("[1]", "not condition=weight"), (#"{"#, "not a JSON object"),
            (String(repeating: "background=1,", count: 400), "at most 4096 bytes"),
        ] {
            do {
                _ = try DevicePopulation(parsing: text)
                Issue.record("'\(text.prefix(30))' was accepted")
            } catch {
                #expect("\(error)".contains(words), "'\(text.prefix(30))': \(error)")
            }
        }
    }

    @Test func alternatingIsEveryOtherDevice() {
        #expect(
            (0..<6).map { DevicePopulation.alternating.condition(of: $0, seed: 99) } == [
                .foreground, .background, .foreground, .background, .foreground, .background,
            ])
        #expect(DevicePopulation.all(.doze).condition(of: 12, seed: 3) == .doze)
    }
}
