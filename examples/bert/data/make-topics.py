#!/usr/bin/env python3
# ===- examples/bert/data/make-topics.py - a seeded topic classification task ===#
#
# Writes train.tsv and valid.tsv ('label<TAB>text' lines) into the directory
# given (default: beside this script). Each text is 5 to 14 words: filler
# words drawn from a common pool, and one to three topic words of its label
# (sports, food or weather) at random places. Filler words never name a
# topic, so the label is decided by the words present, whatever the order;
# a model that reads every position gets all of them right.
#
#   /usr/bin/python3 examples/bert/data/make-topics.py [DIR] [--seed S]
#
# ===------------------------------------------------------------------------===#
import argparse
import os
import random

TOPICS = {
    "sports": "football tennis goal match team coach referee stadium score "
              "league".split(),
    "food": "bread cheese soup pasta apple kitchen recipe dinner spicy "
            "bakery".split(),
    "weather": "rain snow storm sunny cloudy wind forecast thunder cold "
               "humid".split(),
}
FILLER = ("the a an and or but on in at of to with from by for about after "
          "before today yesterday tomorrow very quite really some many few "
          "people friend city street house morning evening night week year "
          "we they she he it you i saw heard said think know like want went "
          "came stayed talked waited was were is are be been good bad new old "
          "long short big small early late again always never often maybe "
          "there here this that these those everyone nobody somebody "
          "everything nothing something news story radio phone letter "
          "picture window door table chair road train bus car").split()


def sentence(rng, label):
    words = [rng.choice(FILLER) for _ in range(rng.randint(4, 11))]
    for _ in range(rng.randint(1, 3)):
        words.insert(rng.randint(0, len(words)), rng.choice(TOPICS[label]))
    return " ".join(words)


def write(path, rng, count):
    labels = sorted(TOPICS)
    with open(path, "w") as out:
        for _ in range(count):
            label = rng.choice(labels)
            out.write(f"{label}\t{sentence(rng, label)}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir", nargs="?",
                        default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--valid", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    write(os.path.join(args.dir, "train.tsv"), rng, args.train)
    write(os.path.join(args.dir, "valid.tsv"), rng, args.valid)


if __name__ == "__main__":
    main()
