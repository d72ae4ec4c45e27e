"""Synthetic conversations for the cases the public sets cover thinly: knowledge updates,
paraphrases, names and dates.

Each conversation is one user talking to an assistant over about two months of sessions.
Scattered through small talk on other subjects, the user states facts of four kinds:

* **update**: a value stated, then changed in a later session ("I live in Porto" ... "we moved,
  I live in Lisbon now"); the question ("Which city do I live in?") has both messages as gold,
  the first as ``original_ids`` and the second as ``updated_ids``, so the report counts how
  often the newer one ranks first. A few questions ask about the past ("Where did I live
  before?"), category ``update-past``, with the original alone as gold.
* **paraphrase**: the fact and the question share almost no words ("I can't touch peanuts"
  ... "Do I have any food allergies?").
* **name**: facts about several people; the question names one of them.
* **date**: appointments on different dates; the question names one date.

Everything is drawn from a seeded :class:`random.Random`, so a seed is a fixed data set; the
development and held-out sets of ``graphmem eval suite`` use different seeds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from graphmem_bench.evaluation.format import EvalMessage, EvalQuestion


@dataclass(frozen=True)
class _Topic:
    """A value that changes: how it is stated, how it is changed, how it is asked about."""

    values: tuple[str, ...]
    state: tuple[str, ...]
    change: tuple[str, ...]
    ask: tuple[str, ...]
    ask_past: str


_TOPICS = (
    _Topic(
        ("Porto", "Lisbon", "Leeds", "Denver", "Osaka", "Tallinn", "Austin", "Ghent"),
        ("I live in {v}, in a small flat near the river.", "Home for me is {v} these days."),
        (
            "Big news: we moved, I live in {v} now.",
            "Quick update, I relocated to {v} last weekend.",
        ),
        ("Which city do I live in?", "Where is my home at the moment?"),
        "Where did I live before I moved?",
    ),
    _Topic(
        ("Acme Robotics", "Northwind", "Blue Harbor Bank", "Fernhill Labs", "Quanta Foods"),
        ("I work at {v} as a data engineer.", "My employer is {v}, I joined two years ago."),
        (
            "I accepted the offer, so from Monday my employer is {v}.",
            "I changed jobs and now work at {v}.",
        ),
        ("Where do I work?", "Which company is my employer?"),
        "Which company did I work for previously?",
    ),
    _Topic(
        ("Monday and Wednesday", "Tuesday and Thursday", "Friday and Sunday", "Saturday"),
        ("My gym days are {v}.", "I train at the gym on {v}."),
        ("I rearranged my training, gym days are {v} from now on.", "Gym is on {v} now."),
        ("On which days do I go to the gym?", "When are my gym sessions?"),
        "Which gym days did I have originally?",
    ),
    _Topic(
        ("Maya Patel", "Tom Becker", "Lucia Romero", "Ken Watanabe", "Sara Lind"),
        ("My manager is {v}.", "I report to {v} at work."),
        ("Reorg happened: I report to {v} now.", "I got a new manager, it's {v} from today."),
        ("Who is my manager?", "Who do I report to?"),
        "Who was my manager before the change?",
    ),
    _Topic(
        ("1,500", "2,000", "2,800", "3,200", "4,000"),
        ("My budget for the summer trip is {v} euros.", "I can spend {v} euros on the trip."),
        (
            "I revised the trip budget to {v} euros.",
            "After the bonus the summer trip budget is {v} euros.",
        ),
        ("What is my budget for the summer trip?", "How much can I spend on the trip?"),
        "What was the trip budget I first set?",
    ),
    _Topic(
        ("Spanish", "Japanese", "German", "Italian", "Korean"),
        ("I'm learning {v} in the evenings.", "I started {v} lessons on an app."),
        ("I dropped my old course and switched to {v}.", "These days I'm studying {v} instead."),
        ("Which language am I learning?", "What language do I study in the evenings?"),
        "Which language was I learning at first?",
    ),
    _Topic(
        ("a blue Golf", "a red Corolla", "a grey Model 3", "a green Fiesta", "a black Civic"),
        ("I drive {v}.", "My car is {v}."),
        ("I sold the old car, I drive {v} now.", "Traded in my car yesterday, now it's {v}."),
        ("What car do I drive?", "Which car do I have?"),
        "What car did I drive before?",
    ),
    _Topic(
        ("June 3", "June 17", "July 1", "July 22", "August 5"),
        ("The quarterly report is due on {v}.", "Deadline for the quarterly report: {v}."),
        (
            "The quarterly report deadline moved to {v}.",
            "They pushed the quarterly report, it's due {v} now.",
        ),
        ("When is the quarterly report due?", "What's the deadline for the quarterly report?"),
        "What was the original deadline of the quarterly report?",
    ),
    _Topic(
        ("Biscuit", "Pepper", "Luna", "Mochi", "Rex"),
        ("Our dog is called {v}.", "We adopted a puppy named {v}."),
        (
            "We renamed the dog, he answers to {v} now.",
            "The kids insisted, the dog's name is {v} now.",
        ),
        ("What is my dog's name?", "What do we call our dog?"),
        "What was the dog's name at first?",
    ),
    _Topic(
        ("vegetarian", "vegan", "pescatarian", "keto"),
        ("I follow a {v} diet.", "Food-wise I'm {v}."),
        ("I changed my diet, I'm {v} now.", "New diet since last month: {v}."),
        ("What diet do I follow?", "What do I eat these days, diet-wise?"),
        "Which diet did I follow before?",
    ),
)

# (statement, question) pairs that share next to no words.
_PARAPHRASES = (
    ("I can't touch peanuts, my throat swells up.", "Do I have any food allergies?"),
    ("Heights make me dizzy, I never go up ladders.", "Am I afraid of anything?"),
    ("My mother turns seventy in the autumn.", "How old is my mom?"),
    ("I sleep badly when I drink coffee after lunch.", "What affects my rest at night?"),
    ("The left knee still hurts since the ski accident.", "Do I have any injuries?"),
    ("I'm saving up for a deposit on a flat.", "What are my financial goals?"),
    ("My daughter started primary school this September.", "How old is my child?"),
    ("I play the cello in a community orchestra.", "Do I make music?"),
    ("Sundays I volunteer at the food bank.", "What do I do on weekends for others?"),
    ("I only read on the train to the office.", "When do I find time for books?"),
    ("My brother and I haven't spoken since the wedding.", "How is my family relationship?"),
    ("Cold weather triggers my asthma.", "Which health conditions do I have?"),
    ("I grew up on a farm outside Cork.", "Where is my childhood home?"),
    ("I'm colour blind, red and green look alike to me.", "Do I have trouble with vision?"),
    ("My salary went up by ten percent in March.", "Did I get a raise?"),
)

_PEOPLE = ("Priya", "Jonas", "Aiko", "Mateo", "Fatima", "Oskar", "Leila", "Dmitri", "Grace")
_JOBS = ("a nurse", "a pilot", "an architect", "a baker", "a lawyer", "a teacher", "a chef")
_RELATIONS = ("sister", "cousin", "neighbour", "colleague", "best friend", "brother-in-law")

_EVENTS = (
    "a dentist appointment",
    "the car service",
    "a job interview",
    "my sister's birthday dinner",
    "a parent-teacher meeting",
    "the plumber coming",
    "a flight to Berlin",
)
_MONTHS = ("May", "June", "July", "August")

_SMALL_TALK = (
    "Can you suggest a recipe with chickpeas and spinach?",
    "What's a good way to stretch after running?",
    "Explain how compound interest works, briefly.",
    "Any tips for keeping basil alive indoors?",
    "Write a short haiku about autumn rain.",
    "How do I remove a coffee stain from a white shirt?",
    "What's the difference between a latte and a flat white?",
    "Recommend a board game for four players.",
    "How long should I boil an egg for a runny yolk?",
    "Give me three ideas for a rainy afternoon.",
    "What is the capital of Australia?",
    "How do noise-cancelling headphones work?",
    "Summarise the plot of Hamlet in two sentences.",
    "Is it better to water plants in the morning or evening?",
    "What's a polite way to decline a meeting?",
    "Suggest a name for a book club.",
    "How many minutes of exercise a day is recommended?",
    "Translate 'good morning' into French.",
    "What should I pack for a weekend hike?",
    "How do I make cold brew at home?",
)
_ACKS = (
    "Got it, thanks for telling me.",
    "Noted. Anything else I can help with?",
    "Thanks, I'll keep that in mind.",
    "Understood.",
    "Good to know!",
)
_ANSWERS = (
    "Here's a simple idea you could try, step by step, with a couple of variations.",
    "Sure. In short: start small, keep it consistent, and adjust as you go.",
    "Happy to help. There are a few common approaches; the easiest is usually best.",
    "Good question. The short answer is that it depends, but here is a rule of thumb.",
)


def generate(
    seed: int, conversations: int = 24, prefix: str = "synthetic"
) -> tuple[list[EvalMessage], list[EvalQuestion]]:
    """A synthetic data set: ``conversations`` conversations, each with nine updates, two
    past-tense update questions, and four questions each on paraphrases, names and dates."""
    rng = random.Random(seed)
    messages: list[EvalMessage] = []
    questions: list[EvalQuestion] = []
    start = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
    for n in range(1, conversations + 1):
        conv = f"{prefix}-{seed}-{n}"
        built = _Conversation(conv, rng, start)
        messages += built.messages
        questions += built.questions
    return messages, questions


class _Conversation:
    """One conversation: fifteen sessions, three days apart, of small talk and statements."""

    SESSIONS = 15

    def __init__(self, conv: str, rng: random.Random, start: datetime) -> None:
        self.conv, self.rng = conv, rng
        self.messages: list[EvalMessage] = []
        self.questions: list[EvalQuestion] = []
        # Per session, the user statements to place: (text, key) with key naming the fact.
        plan: list[list[tuple[str, str]]] = [[] for _ in range(self.SESSIONS)]
        asks: list[tuple[str, str, tuple[str, ...], dict[str, list[str]] | None]] = []
        for t, topic in enumerate(rng.sample(_TOPICS, 9)):
            old, new = rng.sample(topic.values, 2)
            first = rng.randrange(0, self.SESSIONS - 4)
            later = rng.randrange(first + 1, self.SESSIONS)
            plan[first].append((rng.choice(topic.state).format(v=old), f"u{t}a"))
            plan[later].append((rng.choice(topic.change).format(v=new), f"u{t}b"))
            extra = {"original_ids": [f"u{t}a"], "updated_ids": [f"u{t}b"]}
            asks.append(("update", rng.choice(topic.ask), (f"u{t}a", f"u{t}b"), extra))
            if t < 2:
                asks.append(("update-past", topic.ask_past, (f"u{t}a",), None))
        for p, (fact, ask) in enumerate(rng.sample(_PARAPHRASES, 4)):
            plan[rng.randrange(self.SESSIONS)].append((fact, f"p{p}"))
            asks.append(("paraphrase", ask, (f"p{p}",), None))
        people = rng.sample(_PEOPLE, 6)
        for i, person in enumerate(people):
            job, relation = rng.choice(_JOBS), rng.choice(_RELATIONS)
            text = f"My {relation} {person} works as {job} and loves hiking."
            plan[rng.randrange(self.SESSIONS)].append((text, f"n{i}"))
            if i < 4:
                asks.append(("name", f"What does {person} do for a living?", (f"n{i}",), None))
        days = rng.sample([(m, d) for m in _MONTHS for d in range(2, 29)], 6)
        for i, ((month, day), event) in enumerate(zip(days, rng.sample(_EVENTS, 6), strict=True)):
            text = f"Reminder for myself: {event} on {month} {day}."
            plan[rng.randrange(self.SESSIONS)].append((text, f"d{i}"))
            if i < 4:
                asks.append(("date", f"What do I have planned on {month} {day}?", (f"d{i}",), None))
        ids = self._write(plan, start)
        asked_at = start + timedelta(days=3 * self.SESSIONS + 1)
        for category, text, gold, pair in asks:
            mapped = {key: [ids[k] for k in keys] for key, keys in pair.items()} if pair else None
            self.questions.append(
                EvalQuestion(
                    conversation_id=conv,
                    question=text,
                    question_time=asked_at,
                    gold_message_ids=tuple(ids[k] for k in gold),
                    category=category,
                    extra=mapped,
                )
            )

    def _write(self, plan: list[list[tuple[str, str]]], start: datetime) -> dict[str, str]:
        """The sessions' messages; returns the message id of each statement key."""
        ids: dict[str, str] = {}
        rng = self.rng
        for s, statements in enumerate(plan):
            turns: list[tuple[str, str, str | None]] = []
            turns += [("user", chat, None) for chat in rng.sample(_SMALL_TALK, 3)]
            for statement, fact in statements:
                turns.insert(rng.randrange(len(turns) + 1), ("user", statement, fact))
            at = start + timedelta(days=3 * s, hours=rng.randrange(0, 10))
            session = f"s{s + 1}"
            for i, (role, said, key) in enumerate(turns):
                for r, body in ((role, said), ("assistant", self._reply(key))):
                    number = len(self.messages)
                    message_id = f"{session}-m{number}"
                    if r == "user" and key is not None:
                        ids[key] = message_id
                    self.messages.append(
                        EvalMessage(
                            conversation_id=self.conv,
                            session_id=session,
                            message_id=message_id,
                            role=r,
                            speaker="User" if r == "user" else "Assistant",
                            time=at + timedelta(minutes=2 * i, seconds=30 * (r == "assistant")),
                            text=body,
                        )
                    )
        return ids

    def _reply(self, key: str | None) -> str:
        return self.rng.choice(_ACKS if key is not None else _ANSWERS)
