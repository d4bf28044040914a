//! The classic fingerprint methods (`supershingle`, `imatch`, `topn`, `segments`,
//! `sentences`): each one's documented strength and weakness on small hand-made cases and
//! the I-Match lexicon saved and read back; and for every method of the registry, sketches
//! that round-trip (with each verification it offers), copies found, and the same results
//! on one and two threads.

use neardup_core::registry::{self, MethodVisitor, ParamKind, Params, Registered};
use neardup_core::{Method, Sketch};
use neardup_engine::{dedup, EngineOptions, NoProgress, Outcome};

/// Runs `method` with `params` over `docs` and returns the outcome.
fn run(method: &str, params: &[(&str, &str)], docs: &[String]) -> Outcome {
    run_with(method, params, docs, EngineOptions::default())
}

fn run_with(
    method: &str,
    params: &[(&str, &str)],
    docs: &[String],
    options: EngineOptions,
) -> Outcome {
    struct Run<'a>(&'a [String], EngineOptions);
    impl MethodVisitor for Run<'_> {
        type Output = Outcome;
        fn visit<M: Registered>(self, method: M) -> Outcome {
            dedup(&method, self.0, self.1, &NoProgress).unwrap()
        }
    }
    let mut given = Params::new();
    for (name, value) in params {
        given.insert(*name, *value);
    }
    registry::with_method(method, &given, Run(docs, options)).unwrap()
}

fn duplicate_of(method: &str, params: &[(&str, &str)], docs: &[String]) -> Vec<Option<u32>> {
    run(method, params, docs).assignment.duplicate_of
}

/// Six sentences of a news story.
const BODY: [&str; 6] = [
    "国家统计局今天发布数据，十月份全国居民消费价格同比上涨百分之二点一，涨幅比上月扩大零点三个百分点。",
    "其中食品价格上涨百分之四点五，非食品价格上涨百分之一点五，服务价格上涨百分之一点八。",
    "分析人士指出，猪肉和鲜菜价格的季节性上涨是推高物价的主要因素，能源价格则有所回落。",
    "从环比看，居民消费价格上涨百分之零点四，其中城市上涨百分之零点三，农村上涨百分之零点五。",
    "专家预计，随着稳物价措施持续发力，年底前物价涨幅将保持在合理区间，全年目标能够实现。",
    "统计局同时公布，工业生产者出厂价格同比下降百分之一点三，降幅比上月收窄零点二个百分点。",
];

fn body() -> String {
    BODY.concat()
}

/// Unrelated documents, so that corpus statistics (IDF) are not those of two texts.
fn filler() -> Vec<String> {
    let topics = [
        "北京市今天举行新闻发布会，介绍冬季供暖准备情况，全市供热管网已全部完成检修。",
        "中国女排在世界联赛中以三比一战胜对手，取得三连胜，主教练表示队员状态正在恢复。",
        "气象台发布寒潮蓝色预警，预计未来三天北方大部地区气温将下降八到十度，并伴有大风。",
        "教育部印发通知，要求各地中小学严格控制作业总量，保障学生每天一小时体育活动时间。",
        "上海港集装箱吞吐量连续十三年位居世界第一，今年前十个月同比增长百分之五点二。",
        "科学家在南海发现一个新的珊瑚礁生态系统，其中包括多种此前未被记录的鱼类和贝类。",
        "全国铁路今天开始实行新的列车运行图，新增动车组列车一百余列，运输能力进一步提升。",
        "某电影在国庆档上映后票房突破二十亿元，成为今年国产电影票房排名第三的作品。",
    ];
    topics.iter().map(|t| (*t).to_owned()).collect()
}

#[test]
fn sentence_features_survive_a_changed_header_and_footer_and_segments_do_not() {
    let original = format!("本报讯（记者张明）\n{}\n责任编辑：李华", body());
    let repost = format!(
        "转载自新华网客户端，转载请注明出处。\n{}\n欢迎关注我们的公众号获取更多财经资讯。编辑：王强",
        body()
    );
    let mut docs = filler();
    docs.extend([original, repost]);
    let last = docs.len() - 1;
    for (method, params) in [
        ("sentences", vec![]),
        ("sentences", vec![("sentence_signature", "longest")]),
    ] {
        let found = duplicate_of(method, &params, &docs);
        assert_eq!(found[last], Some(last as u32 - 1), "{method} {params:?}");
        assert!(
            found[..last].iter().all(Option::is_none),
            "{method}: {found:?}"
        );
    }
    // The header's length changed: every boundary of the equal pieces moved.
    let found = duplicate_of("segments", &[], &docs);
    assert_eq!(found[last], None);
}

#[test]
fn segments_catch_a_local_substitution_but_not_an_inserted_sentence() {
    let original = body();
    let corrected = original
        .replace("二点一", "二点二")
        .replace("零点四", "零点五");
    let inserted = format!("本台消息，以下为详细内容。{original}");
    let docs = vec![original.clone(), corrected, inserted];
    let found = duplicate_of("segments", &[], &docs);
    assert_eq!(found, vec![None, Some(0), None]);
    // The same pair is a near-duplicate by the measure: only the segments miss it.
    let found = duplicate_of("minhash", &[], &docs);
    assert_eq!(found, vec![None, Some(0), Some(0)]);
}

/// A lexicon of a few words the body has (and words it does not).
const LEXICON: &str = "居民\n消费\n价格\n食品\n猪肉\n能源\n环比\n农村\n专家\n工业\n房地产\n汽车\n";

#[test]
fn imatch_misses_a_changed_lexicon_word_and_extra_lexicons_find_it() {
    let original = body();
    // "房地产" is a lexicon word; the rest of the sentence is not in the lexicon.
    let edited = format!("{original}房地产销售平稳。");
    let docs = vec![original, edited];
    let single = [("lexicon_file", LEXICON), ("extra_lexicons", "0")];
    assert_eq!(duplicate_of("imatch", &single, &docs), vec![None, None]);
    let multi = [("lexicon_file", LEXICON), ("extra_lexicons", "10")];
    assert_eq!(duplicate_of("imatch", &multi, &docs), vec![None, Some(0)]);
}

#[test]
fn imatch_ignores_words_outside_its_lexicon() {
    let original = body();
    // Changes to words outside the lexicon ("今天" -> "昨天", "分析人士" -> "业内人士").
    let edited = original
        .replace("今天", "昨天")
        .replace("分析人士", "业内人士");
    let docs = vec![original, edited];
    let single = [("lexicon_file", LEXICON), ("extra_lexicons", "0")];
    assert_eq!(duplicate_of("imatch", &single, &docs), vec![None, Some(0)]);
}

#[test]
fn unverified_signatures_merge_texts_that_only_share_their_key_words() {
    // The same lexicon words in two different texts: one signature, two stories.
    let a = "Consumer prices rose as food and pork prices climbed, energy eased, and experts said \
             rural areas saw the most.";
    let b = "Experts on rural budgets say households spend more on food, pork and energy than on \
             anything else, and prices worry them; a different story altogether.";
    let docs = vec![a.to_owned(), b.to_owned()];
    const LEXICON: &str = "prices\nfood\npork\nenergy\nrural\nexperts\nwheat\n";
    let params = [("lexicon_file", LEXICON), ("extra_lexicons", "0")];
    let classic = [("verify", "none"), params[0], params[1]];
    assert_eq!(duplicate_of("imatch", &classic, &docs), vec![None, Some(0)]);
    assert_eq!(duplicate_of("imatch", &params, &docs), vec![None, None]);
}

#[test]
fn imatch_lexicon_saved_and_read_back_gives_the_same_result() {
    let mut docs = filler();
    for (i, (sentence, other)) in BODY.iter().zip(filler()).take(4).enumerate() {
        docs.push(format!("{}第{i}次更新。", body()));
        docs.push(format!("{sentence}{other}"));
    }
    let options = EngineOptions {
        save_lexicon: true,
        ..EngineOptions::default()
    };
    let learned = run_with("imatch", &[], &docs, options);
    let lexicon = learned.stats.lexicon.clone().expect("a lexicon");
    assert!(lexicon.starts_with(neardup_core::methods::imatch::LEXICON_HEADER));
    assert!(lexicon.lines().count() > 10, "{lexicon}");
    let read_back = run("imatch", &[("lexicon_file", &lexicon)], &docs);
    assert_eq!(learned.assignment, read_back.assignment);
    assert!(learned.assignment.duplicate_of.iter().any(Option::is_some));
    // A method without a lexicon cannot save one.
    struct Minhash<'a>(&'a [String]);
    impl MethodVisitor for Minhash<'_> {
        type Output = neardup_core::Result<Outcome>;
        fn visit<M: Registered>(self, method: M) -> Self::Output {
            let options = EngineOptions {
                save_lexicon: true,
                ..EngineOptions::default()
            };
            dedup(&method, self.0, options, &NoProgress)
        }
    }
    let error = registry::with_method("minhash", &Params::new(), Minhash(&docs))
        .unwrap()
        .unwrap_err();
    assert_eq!(error.parameter(), "save_lexicon");
}

#[test]
fn imatch_refuses_a_bad_lexicon_file_naming_the_line() {
    let bad = Params::new().set("lexicon_file", "# saved\n0xzz 3\n");
    let error =
        <neardup_core::methods::imatch::IMatch as Registered>::from_params(&bad).unwrap_err();
    assert_eq!(error.parameter(), "lexicon_file");
    assert!(error.to_string().contains("line 2"), "{error}");
    let empty = Params::new().set("lexicon_file", "# nothing\n\n");
    assert!(<neardup_core::methods::imatch::IMatch as Registered>::from_params(&empty).is_err());
}

#[test]
fn topn_keeps_its_fingerprint_unless_a_top_word_goes() {
    let mut docs = filler();
    let story = "光伏企业扩产，光伏组件降价，光伏装机创新高。储能项目加快落地，储能电池需求旺盛。\
                 行业协会表示，明年光伏和储能仍将保持增长，企业需要关注成本和技术路线。";
    docs.push(story.to_owned());
    // A changed clause of common words: the top words stay.
    docs.push(story.replace("企业需要关注成本和技术路线", "企业应当关注成本以及技术路线"));
    // Every "光伏" gone: the first word of the fingerprint is gone.
    docs.push(story.replace("光伏", "风电"));
    let n = docs.len();
    // With few documents, a word found in one only weighs more than a shared one: the three
    // top words are those the story repeats.
    let found = duplicate_of("topn", &[("verify", "none"), ("top_n", "3")], &docs);
    assert_eq!(found[n - 2], Some(n as u32 - 3));
    assert_eq!(found[n - 1], None);
}

#[test]
fn super_shingles_find_close_copies_and_miss_looser_ones() {
    let original = body();
    let close = original.replace("零点三个百分点", "零点三个点");
    let loose = format!(
        "{}{}",
        BODY[..4].concat(),
        "另据海关总署消息，前十个月进出口总值同比增长百分之零点六，其中出口增长百分之五。"
    );
    let docs = vec![original, close, loose];
    let jaccard = |a: usize, b: usize| {
        let method = neardup_core::methods::minhash::MinHashBuilder::new()
            .build()
            .unwrap();
        method.similarity(&method.sketch(&docs[a]), &method.sketch(&docs[b]))
    };
    assert!(jaccard(0, 1) > 0.9, "{}", jaccard(0, 1));
    assert!((0.4..0.7).contains(&jaccard(0, 2)), "{}", jaccard(0, 2));
    assert_eq!(
        duplicate_of("supershingle", &[], &docs),
        vec![None, Some(0), None]
    );
    // MinHash tunes its bands to the threshold (0.4) and finds both.
    assert_eq!(
        duplicate_of("minhash", &[], &docs),
        vec![None, Some(0), Some(0)]
    );
}

#[test]
fn min_super_and_min_segments_require_more_shared_keys() {
    let original = body();
    let close = original.replace("二点一", "二点二");
    let docs = vec![original, close];
    assert_eq!(
        duplicate_of("supershingle", &[("min_super", "6")], &docs)[1],
        None,
        "an edit breaks at least one of the six super-shingles"
    );
    assert_eq!(
        duplicate_of("segments", &[("min_segments", "8")], &docs)[1],
        None
    );
    assert_eq!(
        duplicate_of("segments", &[("min_segments", "7")], &docs)[1],
        Some(0)
    );
}

/// A corpus of light edits of the body and the filler, in a fixed order.
fn edited_corpus() -> Vec<String> {
    let mut docs = filler();
    let text = body();
    for i in 0..12u32 {
        let mut edited = text.clone();
        let cut = (i as usize * 7) % 40;
        edited.replace_range(
            edited.char_indices().nth(cut).unwrap().0
                ..edited.char_indices().nth(cut + 2).unwrap().0,
            "",
        );
        docs.push(format!("{edited}（{i}）"));
        docs.push(format!(
            "{}{}",
            filler()[i as usize % 8],
            BODY[i as usize % 6]
        ));
    }
    docs
}

#[test]
fn every_method_gives_the_same_result_on_one_and_two_threads() {
    let docs = edited_corpus();
    for spec in registry::methods() {
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let outcome = pool.install(|| run(spec.name, &[], &docs));
            let pairs: Vec<_> = (outcome.all_pairs())
                .map(|p| (p.a, p.b, p.similarity.to_bits()))
                .collect();
            (outcome.assignment, pairs)
        };
        assert_eq!(on(1), on(2), "{}", spec.name);
    }
    // Every method that looks beyond exact copies finds some of the edited ones.
    for spec in registry::methods()
        .into_iter()
        .filter(|spec| spec.finds_candidates)
    {
        let outcome = run(spec.name, &[], &docs);
        assert!(
            outcome.assignment.duplicate_of.iter().any(Option::is_some),
            "{} finds none of the copies",
            spec.name
        );
    }
}

#[test]
fn every_sketch_round_trips_and_refuses_other_kinds() {
    struct RoundTrip<'a>(&'a [String]);
    impl MethodVisitor for RoundTrip<'_> {
        type Output = ();
        fn visit<M: Registered>(self, method: M) {
            for text in self.0 {
                let sketch = method.sketch(text);
                let mut bytes = Vec::new();
                sketch.encode(&mut bytes);
                let back = M::Sketch::decode(&bytes).unwrap();
                let mut again = Vec::new();
                back.encode(&mut again);
                assert_eq!(bytes, again, "{}", method.name());
                for cut in 0..bytes.len() {
                    assert!(
                        M::Sketch::decode(&bytes[..cut]).is_err(),
                        "{} cut {cut}",
                        method.name()
                    );
                }
                let mut other = bytes.clone();
                other[3] = other[3].wrapping_add(1);
                assert!(M::Sketch::decode(&other).is_err(), "{}", method.name());
            }
        }
    }
    let texts = vec![
        body(),
        String::new(),
        "短文本。".to_owned(),
        filler()[0].clone(),
    ];
    // Every method, with each verification it offers.
    for spec in registry::methods() {
        let verifies = match spec.param("verify").map(|p| p.kind) {
            Some(ParamKind::Choice(choices)) => choices.to_vec(),
            _ => vec![""],
        };
        for verify in verifies {
            let params = match verify {
                "" => Params::new(),
                verify => Params::new().set("verify", verify),
            };
            if spec.name == "supershingle" && verify == "edit" {
                continue;
            }
            registry::with_method(spec.name, &params, RoundTrip(&texts)).unwrap();
        }
    }
}

#[test]
fn parameters_out_of_range_are_refused_by_name() {
    struct Build;
    impl MethodVisitor for Build {
        type Output = ();
        fn visit<M: Registered>(self, _method: M) {}
    }
    for (method, name, value) in [
        ("supershingle", "super_shingles", "5"),
        ("supershingle", "min_super", "7"),
        ("supershingle", "verify", "edit"),
        ("imatch", "lexicon_low", "0.95"),
        ("imatch", "lexicon_drop", "1.5"),
        ("imatch", "min_terms", "0"),
        ("topn", "top_n", "0"),
        ("segments", "min_segments", "9"),
        ("segments", "segments", "0"),
        ("sentences", "sentence_signature", "words"),
        ("sentences", "context", "0"),
        ("sentences", "threshold", "0"),
    ] {
        let params = Params::new().set(name, value);
        let error = registry::with_method(method, &params, Build).unwrap_err();
        assert_eq!(error.parameter(), name, "{method} {name}={value}: {error}");
    }
}
