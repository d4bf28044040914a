//! Notice floods: short messages as message platforms carry them. Each notice is a filling of
//! a template (a bank, parcel, train, verification-code, power-bill or exam notice, Chinese
//! or English) or a short post, and is sent 1 to `max_copies` times with the light edits
//! mass-sent text picks up on the way: a forwarding prefix, an unsubscribe suffix, 您 for 你,
//! a full-width comma turned into ", ", a space every 20 characters; posts come under a dated
//! header line or with an inline wrapper on their own line (a "转载" note, a source tag, a
//! "follow us" call).
//!
//! Two truths come with a flood: the notice (copies of one notice are duplicates, two
//! fillings of one template are not) and the template (every filling of one template is one
//! cluster: the reading of mass-sent spam).

use super::names::{amount, between, digits, fill, pick, EN_FIRST, EN_LAST, ZH_CITIES};
use super::rng::Rng;

/// What a flood is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloodShape {
    /// Template notices (SMS): fillings of [`SMS_TEMPLATES`].
    Sms,
    /// Posts under a dated header line ("1月16日 早安！…"), the date of each copy its own.
    Headers,
    /// Short posts with an inline wrapper on the post's own line ("（本文转载自网络…）").
    Wrappers,
    /// All three, a third each.
    Mixed,
}

impl FloodShape {
    /// Every shape, in the order of their names.
    pub const ALL: [FloodShape; 4] = [
        FloodShape::Sms,
        FloodShape::Headers,
        FloodShape::Wrappers,
        FloodShape::Mixed,
    ];

    /// The name `--shape` takes.
    pub fn name(self) -> &'static str {
        match self {
            FloodShape::Sms => "sms",
            FloodShape::Headers => "headers",
            FloodShape::Wrappers => "wrappers",
            FloodShape::Mixed => "mixed",
        }
    }
}

impl std::str::FromStr for FloodShape {
    type Err = String;
    fn from_str(text: &str) -> Result<FloodShape, String> {
        FloodShape::ALL
            .into_iter()
            .find(|shape| shape.name() == text)
            .ok_or_else(|| {
                format!("unknown shape {text:?} (expected sms, headers, wrappers or mixed)")
            })
    }
}

/// The templates of [`FloodShape::Sms`]: (name, pattern). The exam notices differ only by a
/// name, a city and five small numbers; the appointment reminders by a name and small numbers.
pub const SMS_TEMPLATES: [(&str, &str); 9] = [
    ("bank", "【{bank}】您尾号{d4}的储蓄卡于{month}月{day}日{hh}:{mm}支出人民币{amount}元，当前余额{amount}元。如有疑问请致电{bankphone}。"),
    ("parcel", "【{courier}】您的包裹已到达{city}{place}驿站，取件码{pickup}，请于{month}月{day}日前凭取件码领取，逾期将退回。"),
    ("train", "【铁路客服】订单E{d9}，{name}您已购{month}月{day}日G{train}次{car}车{row}{letter}号，{city}站{hh}:{mm}开，检票口{gate}，请提前到站。"),
    ("code", "【{app}】您的验证码是{d6}，{n}分钟内有效，请勿泄露给他人。若非本人操作，请忽略本短信。"),
    ("power", "【国网{province}电力】尊敬的客户，您户号{d10}的{month}月电费为{amount}元，截至{day}日尚未缴纳，请及时缴费以免影响用电。"),
    ("exam", "【{city}教育考试院】{name}同学您好，您报名的考试将于{month}月{day}日{hour}点开始，考场为第{room}考场，座位号{seat}，请携带身份证和准考证提前三十分钟到达。"),
    ("en-bank", "{bankname} alert: a purchase of ${amount} was made on your card ending in {d4} on {Month} {day}. If this was not you, call {phone}."),
    ("en-appointment", "Hi {first}, this is a reminder of your appointment with Dr. {last} on {Month} {day} at {h} {ampm} in room {room}. Reply C to confirm."),
    ("en-code", "Your {enapp} verification code is {d6}. It expires in {n} minutes. Do not share it with anyone."),
];

/// Dated header lines of [`FloodShape::Headers`]: `{M}` and `{D}` are the copy's own date.
pub const HEADERS: [&str; 4] = [
    "{M}月{D}日 早安！每天一首好诗，陪你度过美好的一天。",
    "【{M}月{D}日 星期{W}】今日分享，欢迎转发",
    "{M}/{D} 每日一读 | 读书会精选",
    "Good morning! {Month} {D}, your daily read:",
];

/// Inline wrappers of [`FloodShape::Wrappers`]: (text, whether it goes before the post).
pub const WRAPPERS: [(&str, bool); 6] = [
    ("（本文转载自网络，如有侵权请联系删除）", false),
    ("点击关注，获取更多精彩内容！", false),
    ("【来源：新华网】", false),
    ("转发：", true),
    ("【转载】", true),
    (" (via @dailynews, share if you agree)", false),
];

/// Options of [`notice_flood`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloodOptions {
    /// What the flood is made of.
    pub shape: FloodShape,
    /// How many notices (distinct fillings or posts); each is sent 1 to `max_copies` times.
    pub notices: usize,
    /// Most copies of a notice (at least 1).
    pub max_copies: usize,
    /// Seed of every random choice.
    pub seed: u64,
}

impl Default for FloodOptions {
    fn default() -> FloodOptions {
        FloodOptions {
            shape: FloodShape::Sms,
            notices: 5000,
            max_copies: 4,
            seed: 1,
        }
    }
}

/// One document of a flood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloodDocument {
    /// `n<notice>-c<copy>`.
    pub id: String,
    /// The text as sent.
    pub text: String,
    /// The notice it is a copy of (`n<notice>`): the duplicate truth.
    pub notice: String,
    /// Its template (a name of [`SMS_TEMPLATES`]), or its notice for a post: the truth of
    /// `--templates duplicate`.
    pub template: String,
}

/// A flood of `options.notices` notices, their copies shuffled with the seed. Posts
/// ([`FloodShape::Headers`], [`FloodShape::Wrappers`]) take their bodies from `bodies` in
/// order, and from random Chinese text when `bodies` runs out; bodies should be distinct.
pub fn notice_flood(options: &FloodOptions, bodies: &[&str]) -> Vec<FloodDocument> {
    let mut rng = Rng::new(options.seed);
    let mut documents = Vec::new();
    let mut next_body = 0;
    for notice in 0..options.notices {
        let shape = match options.shape {
            FloodShape::Mixed => {
                [FloodShape::Sms, FloodShape::Headers, FloodShape::Wrappers][notice % 3]
            }
            shape => shape,
        };
        let copies = 1 + rng.below(options.max_copies.max(1));
        let notice_id = format!("n{notice}");
        let (template, texts) = match shape {
            FloodShape::Sms => sms_copies(&mut rng, copies),
            _ => {
                let body = match bodies.get(next_body) {
                    Some(body) => body.trim().to_owned(),
                    None => random_post(&mut rng),
                };
                next_body += 1;
                let texts = match shape {
                    FloodShape::Headers => header_copies(&mut rng, &body, copies),
                    _ => wrapper_copies(&mut rng, &body, copies),
                };
                (notice_id.clone(), texts)
            }
        };
        for (copy, text) in texts.into_iter().enumerate() {
            documents.push(FloodDocument {
                id: format!("{notice_id}-c{copy}"),
                text,
                notice: notice_id.clone(),
                template: template.clone(),
            });
        }
    }
    let mut shuffle = Rng::stream(options.seed, u64::MAX);
    shuffle.shuffle(&mut documents);
    documents
}

/// The copies of one SMS notice: the first as sent, the others with one or two light edits.
fn sms_copies(rng: &mut Rng, copies: usize) -> (String, Vec<String>) {
    let (name, pattern) = SMS_TEMPLATES[rng.below(SMS_TEMPLATES.len())];
    let notice = fill(pattern, |slot| slot_value(slot, rng));
    let english = name.starts_with("en-");
    let texts = (0..copies)
        .map(|copy| match copy {
            0 => notice.clone(),
            _ => light_edits(rng, &notice, english),
        })
        .collect();
    (name.to_owned(), texts)
}

/// One or two of the light edits of a forwarded message.
fn light_edits(rng: &mut Rng, text: &str, english: bool) -> String {
    let mut text = text.to_owned();
    let edits = 1 + rng.below(2);
    for _ in 0..edits {
        text = match rng.below(5) {
            0 => match english {
                true => format!("Fwd: {text}"),
                false => format!("转发：{text}"),
            },
            1 => match english {
                true => format!("{text} Reply STOP to opt out"),
                false => format!("{text}回T退订"),
            },
            2 => match english {
                true => text.replacen("your", "ur", 1),
                false => text.replace('您', "你"),
            },
            3 => match english {
                true => text.replacen(". ", "! ", 1),
                false => text.replace('，', ", "),
            },
            _ => spaced(&text, 20),
        };
    }
    text
}

/// `text` with a space after every `every` characters.
fn spaced(text: &str, every: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / every + 1);
    for (i, c) in text.chars().enumerate() {
        if i > 0 && i % every == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// The copies of one post, each under a dated header of its own date.
fn header_copies(rng: &mut Rng, body: &str, copies: usize) -> Vec<String> {
    let header = HEADERS[rng.below(HEADERS.len())];
    (0..copies)
        .map(|_| {
            let month = between(rng, 1, 12);
            let line = fill(header, |slot| match slot {
                "M" => month.to_string(),
                "D" => between(rng, 1, 28).to_string(),
                "W" => pick(rng, &["一", "二", "三", "四", "五", "六", "日"]).to_owned(),
                _ => pick(rng, &EN_MONTHS_SHORT).to_owned(),
            });
            format!("{line}\n{body}")
        })
        .collect()
}

/// The copies of one short post: bare, or with an inline wrapper on the post's line.
fn wrapper_copies(rng: &mut Rng, body: &str, copies: usize) -> Vec<String> {
    (0..copies)
        .map(|_| match rng.below(4) {
            0 => body.to_owned(),
            _ => match WRAPPERS[rng.below(WRAPPERS.len())] {
                (wrapper, true) => format!("{wrapper}{body}"),
                (wrapper, false) => format!("{body}{wrapper}"),
            },
        })
        .collect()
}

/// Common Chinese characters a random post is drawn from.
const POST_CHARS: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质";

/// A random short post of 14 to 30 characters (for a flood without bodies).
fn random_post(rng: &mut Rng) -> String {
    let chars: Vec<char> = POST_CHARS.chars().collect();
    let len = between(rng, 14, 30);
    let mut post: String = (0..len).map(|_| chars[rng.below(chars.len())]).collect();
    post.push('。');
    post
}

/// Short English month names (headers).
const EN_MONTHS_SHORT: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A value of a slot of [`SMS_TEMPLATES`].
fn slot_value(slot: &str, rng: &mut Rng) -> String {
    match slot {
        "bank" => pick(
            rng,
            &["工商银行", "建设银行", "农业银行", "招商银行", "中国银行"],
        )
        .to_owned(),
        "bankname" => pick(rng, &["Chase", "Citibank", "Wells Fargo", "HSBC"]).to_owned(),
        "courier" => pick(rng, &["菜鸟驿站", "中通快递", "顺丰速运", "韵达快递"]).to_owned(),
        "app" => pick(rng, &["淘宝", "支付宝", "京东", "美团", "抖音", "微信"]).to_owned(),
        "enapp" => pick(rng, &["Google", "PayPal", "Uber", "Venmo"]).to_owned(),
        "province" => pick(rng, &["江苏", "浙江", "山东", "河南", "四川"]).to_owned(),
        "city" => pick(rng, &ZH_CITIES[..8]).to_owned(),
        "place" => pick(rng, &["人民路", "建设路", "中山路", "幸福小区"]).to_owned(),
        // Names from small sets: a surname and one given character.
        "name" => format!(
            "{}{}",
            pick(rng, &["王", "李", "张", "刘", "陈", "杨", "赵", "黄"]),
            pick(
                rng,
                &["伟", "芳", "娜", "敏", "静", "磊", "军", "洋", "杰", "婷"]
            )
        ),
        "first" => pick(rng, &EN_FIRST[..10]).to_owned(),
        "last" => pick(rng, &EN_LAST[..10]).to_owned(),
        "Month" => pick(rng, &EN_MONTHS_SHORT).to_owned(),
        "phone" => format!("800-555-{}", digits(rng, 4)),
        "bankphone" => format!("95{}", digits(rng, 3)),
        "month" => between(rng, 1, 12).to_string(),
        "day" => between(rng, 1, 28).to_string(),
        "hh" => format!("{:02}", rng.below(24)),
        "mm" => format!("{:02}", rng.below(60)),
        "hour" => between(rng, 8, 16).to_string(),
        "h" => between(rng, 1, 12).to_string(),
        "ampm" => pick(rng, &["AM", "PM"]).to_owned(),
        "room" => between(rng, 1, 30).to_string(),
        "seat" => between(rng, 1, 30).to_string(),
        "n" => between(rng, 2, 15).to_string(),
        "amount" => amount(rng, 5, 9999),
        "pickup" => format!(
            "{}-{}-{}",
            between(rng, 1, 9),
            between(rng, 1, 9),
            digits(rng, 4)
        ),
        "train" => between(rng, 1, 999).to_string(),
        "car" => format!("{:02}", between(rng, 1, 16)),
        "row" => format!("{:02}", between(rng, 1, 20)),
        "letter" => pick(rng, &["A", "B", "C", "D", "F"]).to_owned(),
        "gate" => format!("B{}", between(rng, 1, 20)),
        "d4" => digits(rng, 4),
        "d9" => digits(rng, 9),
        "d10" => digits(rng, 10),
        _ => digits(rng, 6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn every_shape_makes_copies_of_distinct_notices_and_the_same_bytes_for_a_seed() {
        for shape in FloodShape::ALL {
            let options = FloodOptions {
                shape,
                notices: 600,
                ..FloodOptions::default()
            };
            let flood = notice_flood(&options, &[]);
            assert_eq!(flood, notice_flood(&options, &[]));
            let notices: HashSet<&str> = flood.iter().map(|d| d.notice.as_str()).collect();
            assert_eq!(notices.len(), 600, "{shape:?}");
            assert!(
                flood.len() > 1200 && flood.len() < 2400,
                "{shape:?}: {}",
                flood.len()
            );
            // Two notices never share a text: fillings are distinct documents.
            let mut by_text: HashMap<&str, &str> = HashMap::new();
            for document in &flood {
                let other = by_text.insert(&document.text, &document.notice);
                assert!(
                    other.is_none_or(|n| n == document.notice),
                    "{}",
                    document.text
                );
                assert!(!document.text.contains('{'), "{}", document.text);
            }
        }
    }

    #[test]
    fn sms_floods_use_every_template_and_headers_carry_their_own_date() {
        let flood = notice_flood(&FloodOptions::default(), &[]);
        let templates: HashSet<&str> = flood.iter().map(|d| d.template.as_str()).collect();
        assert_eq!(templates.len(), SMS_TEMPLATES.len());
        let options = FloodOptions {
            shape: FloodShape::Headers,
            ..FloodOptions::default()
        };
        let flood = notice_flood(&options, &["床前明月光，疑是地上霜。"]);
        let copies: Vec<&FloodDocument> =
            flood.iter().filter(|d| d.text.contains("床前")).collect();
        assert!(copies
            .iter()
            .all(|d| d.text.ends_with("\n床前明月光，疑是地上霜。")));
    }

    #[test]
    fn light_edits_space_every_twenty_characters() {
        assert_eq!(
            spaced("abcdefghijklmnopqrstuvwxyz", 20),
            "abcdefghijklmnopqrst uvwxyz"
        );
    }
}
