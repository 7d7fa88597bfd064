/// Dates of the proleptic Gregorian calendar as seconds since 1970 (UTC), for the date-times the
/// Notification Hubs interface reads (``W3CDateTime``: `ServiceBusNotification-ScheduleTime`, a template's `Expiry`).
package enum CivilTime {
    /// The days of `month` (1 to 12) in `year`.
    package static func days(in month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Midnight UTC of that day, in seconds since 1970 (Howard Hinnant's days-from-civil).
    package static func seconds(year: Int, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return Int64(era * 146_097 + dayOfEra - 719_468) * 86_400
    }
}
