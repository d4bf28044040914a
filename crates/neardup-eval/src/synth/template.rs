//! Template notices: texts of one family differ only in numbers and names (bank messages,
//! verification codes, dividend announcements...), and each is a document of its own.

use super::names::{
    amount, between, digits, en_name, en_phone, fill, mobile, pick, zh_name, EN_CITIES,
    EN_COMPANIES, EN_FIRST, EN_LAST, EN_MONTHS, ZH_APPS, ZH_BANKS, ZH_CITIES, ZH_COMPANIES,
};
use super::rng::Rng;

/// Chinese template families.
pub const ZH_FAMILIES: [&str; 7] = [
    "【{bank}】您尾号{d4}的储蓄卡于{month}月{day}日{hh}:{mm}支出人民币{amount}元，当前余额{amount}元。如非本人操作请致电{bankphone}，谨防电信诈骗。",
    "【{app}】验证码{d6}，用于{purpose}，{n}分钟内有效，请勿泄露给他人。如非本人操作，请忽略本短信。",
    "【{courier}】您的快递已到达{city}{place}{n}号柜，取件码{d6}，请于{month}月{day}日{hh}:{mm}前取件。如有疑问请联系快递员{name}，电话{mobile}，超时将收取保管费。",
    "关于召开{year}年第{n}次{meeting}的通知：请各部门负责人于{month}月{day}日{hh}:{mm}准时到{company}大厦{d3}会议室参加会议，联系人：{name}，电话：{mobile}。",
    "【{telecom}】尊敬的客户，您{month}月账单已出，本期消费{amount}元，可用余额{amount}元，套餐内剩余流量{n}GB。如有疑问请致电{bankphone}。",
    "{company}股份有限公司关于{year}年度权益分派实施公告：以总股本{big}股为基数，向全体股东每10股派发现金红利{small}元（含税），股权登记日为{month}月{day}日。",
    "【{city}公安】{name}您好，您的车辆{plate}于{month}月{day}日{hh}:{mm}在{city}{place}路段违法停车，罚款{n}00元，请于15日内处理。",
];
/// English template families.
pub const EN_FAMILIES: [&str; 7] = [
    "{company} Inc said its board declared a quarterly dividend of {cts} cts per share, payable {Month} {day} to shareholders of record {Month} {day}.",
    "Hi {first}, thanks for your order #{d8}! Your {item} (qty {n}) totaling ${amount} will ship from our {city} warehouse by {Month} {day}. Track it with code {code}.",
    "Reminder: the {team} team meeting is scheduled for {weekday}, {Month} {day} at {h}:{mm} {ampm} in Room {d3}. Please contact {name} at ext. {d4} with questions.",
    "Your {app} verification code is {d6}. It expires in {n} minutes. Do not share this code with anyone, including {app} staff.",
    "{company} Corp said net income for the quarter was {big} mln dlrs, or {small} dlrs per share, compared with {big} mln dlrs, or {small} dlrs, a year earlier.",
    "Dear {name}, this is a reminder of your appointment with Dr. {last} on {Month} {day} at {h}:{mm} {ampm}. Reply C to confirm or call {phone} to reschedule.",
    "{bank} alert: a purchase of ${amount} was made on your card ending in {d4} at {company} in {city} on {Month} {day}. If this was not you, call {phone}.",
];

/// One notice of family `family` (an index into [`ZH_FAMILIES`] or [`EN_FAMILIES`]).
pub fn notice(chinese: bool, family: usize, rng: &mut Rng) -> String {
    match chinese {
        true => fill(ZH_FAMILIES[family], |slot| zh_slot(slot, rng)),
        false => fill(EN_FAMILIES[family], |slot| en_slot(slot, rng)),
    }
}

/// The number of families of a language.
pub fn families(chinese: bool) -> usize {
    match chinese {
        true => ZH_FAMILIES.len(),
        false => EN_FAMILIES.len(),
    }
}

/// A value of a Chinese slot.
fn zh_slot(slot: &str, rng: &mut Rng) -> String {
    match slot {
        "bank" => pick(rng, &ZH_BANKS).to_owned(),
        "app" => pick(rng, &ZH_APPS).to_owned(),
        "courier" => pick(
            rng,
            &[
                "顺丰速运",
                "中通快递",
                "圆通速递",
                "韵达快递",
                "京东物流",
                "菜鸟驿站",
                "申通快递",
                "极兔速递",
            ],
        )
        .to_owned(),
        "telecom" => pick(rng, &["中国移动", "中国联通", "中国电信", "中国广电"]).to_owned(),
        "company" => pick(rng, &ZH_COMPANIES).to_owned(),
        "city" => pick(rng, &ZH_CITIES).to_owned(),
        "name" => zh_name(rng),
        "mobile" => mobile(rng),
        "bankphone" => format!("95{}", digits(rng, 3)),
        "purpose" => pick(rng, &["登录", "注册", "身份验证", "修改密码", "绑定银行卡"]).to_owned(),
        "place" => pick(
            rng,
            &["人民路", "建设路", "中山路", "解放路", "科技园", "幸福小区"],
        )
        .to_owned(),
        "meeting" => pick(
            rng,
            &[
                "全体员工大会",
                "安全生产工作会议",
                "党委会",
                "股东大会",
                "经营分析会",
            ],
        )
        .to_owned(),
        "plate" => format!(
            "京{}{}",
            char::from(b'A' + rng.below(26) as u8),
            digits(rng, 5)
        ),
        "month" => between(rng, 1, 12).to_string(),
        "day" => between(rng, 1, 28).to_string(),
        "hh" => format!("{:02}", rng.below(24)),
        "mm" => format!("{:02}", rng.below(60)),
        "year" => between(rng, 2015, 2025).to_string(),
        "amount" => amount(rng, 1, 49999),
        "big" => between(rng, 100_000_000, 9_999_999_999).to_string(),
        "small" => format!("{}.{}", between(rng, 0, 9), digits(rng, 2)),
        "n" => between(rng, 2, 30).to_string(),
        "d3" => between(rng, 101, 999).to_string(),
        "d4" => digits(rng, 4),
        _ => digits(rng, 6),
    }
}

/// A value of an English slot.
fn en_slot(slot: &str, rng: &mut Rng) -> String {
    match slot {
        "company" => pick(rng, &EN_COMPANIES).to_owned(),
        "bank" => pick(
            rng,
            &[
                "Chase",
                "Citibank",
                "Wells Fargo",
                "Capital One",
                "HSBC",
                "Barclays",
            ],
        )
        .to_owned(),
        "app" => pick(
            rng,
            &[
                "Google",
                "Microsoft",
                "Amazon",
                "PayPal",
                "Uber",
                "Netflix",
                "Venmo",
            ],
        )
        .to_owned(),
        "city" => pick(rng, &EN_CITIES).to_owned(),
        "name" => en_name(rng),
        "first" => pick(rng, &EN_FIRST).to_owned(),
        "last" => pick(rng, &EN_LAST).to_owned(),
        "phone" => en_phone(rng),
        "item" => pick(
            rng,
            &[
                "wireless headphones",
                "coffee grinder",
                "desk lamp",
                "yoga mat",
                "backpack",
            ],
        )
        .to_owned(),
        "team" => pick(
            rng,
            &["sales", "engineering", "marketing", "finance", "operations"],
        )
        .to_owned(),
        "weekday" => pick(
            rng,
            &["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
        )
        .to_owned(),
        "ampm" => pick(rng, &["AM", "PM"]).to_owned(),
        "Month" => pick(rng, &EN_MONTHS).to_owned(),
        "day" => between(rng, 1, 28).to_string(),
        "h" => between(rng, 1, 12).to_string(),
        "mm" => format!("{:02}", rng.below(60)),
        "cts" => between(rng, 2, 95).to_string(),
        "amount" => amount(rng, 5, 2999),
        "big" => format!("{}.{}", between(rng, 1, 999), digits(rng, 1)),
        "small" => format!("{}.{}", between(rng, 0, 9), digits(rng, 2)),
        "code" => format!("1Z{}", digits(rng, 10)),
        "n" => between(rng, 2, 15).to_string(),
        "d3" => between(rng, 101, 999).to_string(),
        "d4" => digits(rng, 4),
        "d8" => digits(rng, 8),
        _ => digits(rng, 6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed text of a family: its pattern without the slots.
    fn literal(pattern: &str) -> String {
        fill(pattern, |_| String::new())
    }

    #[test]
    fn a_family_shares_most_of_its_text_and_every_slot_is_filled() {
        let mut rng = Rng::new(5);
        for chinese in [true, false] {
            assert!(families(chinese) >= 5);
            for family in 0..families(chinese) {
                let first = notice(chinese, family, &mut rng);
                let second = notice(chinese, family, &mut rng);
                assert_ne!(first, second);
                assert!(!first.contains('{') && !first.contains('}'), "{first}");
                assert!((50..=220).contains(&first.chars().count()), "{first}");
                let pattern = match chinese {
                    true => ZH_FAMILIES[family],
                    false => EN_FAMILIES[family],
                };
                let shared = literal(pattern).chars().count();
                let more: Vec<String> =
                    (0..20).map(|_| notice(chinese, family, &mut rng)).collect();
                for text in [&first, &second].into_iter().chain(&more) {
                    let share = shared as f64 / text.chars().count() as f64;
                    assert!(share >= 0.5, "{share}: {text}");
                }
            }
        }
    }
}
