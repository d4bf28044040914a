//! What tests of several crates share about templates: a crowd of notices and the marks the
//! engine would give them. Not part of the API (hidden from the docs); pure, no I/O.

use std::collections::HashMap;

use crate::{CommonMarking, Method};

/// Exam notice `i` of a crowd made from one template: a city and a name from small sets, and
/// five small numbers (month, day, hour, room, seat), so that two fillings often share some.
pub fn exam_notice(i: usize) -> String {
    const NAMES: [&str; 6] = ["杨娜", "刘芳", "王伟", "李静", "张磊", "陈洋"];
    const CITIES: [&str; 4] = ["上海", "北京", "深圳", "广州"];
    format!(
        "【{}教育考试院】{}同学您好，您报名的考试将于{}月{}日{}点开始，考场为第{}考场，\
         座位号{}，请携带身份证和准考证提前三十分钟到达。",
        CITIES[i % 4],
        NAMES[i % 6],
        1 + i % 12,
        1 + (i * 7) % 28,
        8 + i % 9,
        1 + (i * 3) % 30,
        1 + (i * 11) % 40
    )
}

/// Marks the common features of `sketches` as the engine does when it counts every one
/// exactly ([`Method::common_limit`], [`Method::mark_common`]): a feature of
/// [`Method::frequency_features`] in more than `limit` of them is common.
pub fn mark_by_count<M: Method>(method: &M, sketches: &mut [M::Sketch], limit: usize) {
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for sketch in sketches.iter() {
        for &value in method.frequency_features(sketch) {
            *counts.entry(value).or_default() += 1;
        }
    }
    for sketch in sketches.iter_mut() {
        method.mark_common(sketch, &|value| {
            counts.get(&value).is_some_and(|&n| n > limit)
        });
    }
}
