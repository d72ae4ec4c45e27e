"""Synthetic memories for benchmarks: facts, updates, chat messages and recall questions.

Everything here is a pure function of its arguments (a seeded :class:`random.Random`, no global
state), so a seed and a size always give the same data. The facts are short natural sentences
about people (a name, or a relative or colleague of that name) across everyday topics: work,
family, pets, health, travel, food, hobbies, tech, finance and schedules, e.g.
"Priya's sister moved to Valencia in March to work as a nurse.".

About a tenth of the facts (``update_share``) are *updates*: newer versions of an earlier fact
about the same subject and attribute ("Priya now works at Stripe." after "Priya works at
Shopify."). Each carries the index of the fact it replaces, always the newest version so far,
so every fact is replaced at most once and updates form chains.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

# --- vocabulary -----------------------------------------------------------------------------------
NAMES = (
    "Priya", "Omar", "Lena", "Mateo", "Aisha", "Jonas", "Mei", "Kwame", "Sofia", "Dmitri",
    "Hana", "Lucas", "Fatima", "Noah", "Ingrid", "Ravi", "Chloe", "Tariq", "Elena", "Kenji",
    "Amara", "Felix", "Zara", "Diego", "Yuki", "Samir", "Nadia", "Liam", "Olga", "Arjun",
    "Isabel", "Tomasz", "Leila", "Marcus", "Anya", "Hugo", "Ines", "Kofi", "Freya", "Rahul",
    "Camille", "Bilal", "Greta", "Javier", "Sun-hee", "Emeka", "Clara", "Viktor", "Maya",
    "Pedro", "Alina", "Yusuf", "Nora", "Ethan", "Rosa", "Hiro", "Ayesha", "Lars", "Beatriz",
    "Oscar", "Mira", "Andrei", "Talia", "Kai", "Lucia", "Ibrahim", "Elif", "Daniel", "Sana",
    "Bruno", "Astrid", "Farid", "Julia", "Wei", "Nikhil", "Paula", "Sven", "Imani", "Marco",
    "Dana", "Tobias", "Rania", "Malik", "Vera", "Arash", "Lina", "Jakub", "Ana", "Chidi",
    "Elsa", "Mehmet", "Carmen", "Rohan", "Juno", "Stefan", "Laila", "Gabriel", "Amelie",
    "Hamza", "Iris", "Luca", "Anika", "Reza", "Petra", "Hassan", "Selin", "Jorge", "Maren",
    "Nikos", "Keiko", "Adil", "Ruth", "Matthias", "Zainab", "Emil", "Esther", "Pablo", "Tanvi",
    "Cyrus", "Helga", "Kenzo", "Lior", "Agnes", "Idris", "Fiona", "Ali", "Signe", "Manuel",
    "Asha", "Bastian", "Yara", "Oren", "Martina", "Kenta", "Salma", "Henrik", "Divya",
    "Rafael", "Ebba", "Musa", "Leonie", "Arturo", "Naomi", "Vikram", "Olivia", "Bjorn",
    "Thiago", "Mina", "Gustav", "Deepa", "Ahmed", "Nele", "Caio", "Sakura", "Anton", "Shreya",
    "Maxime", "Ayla", "Finn", "Lucy", "Kamal", "Hedda", "Ramon", "Jae", "Adaeze", "Elias",
    "Noor", "Matteo", "Siobhan", "Rustam", "Eva", "Arnav", "Sara", "Milan", "Ngozi", "Jasper",
    "Lea", "Farah", "Kasper", "Ximena", "Abdul", "Tessa", "Joaquin", "Wanjiru", "Soren",
)  # fmt: skip
RELATIONS = (
    "sister", "brother", "mother", "father", "partner", "manager", "best friend", "neighbour",
    "daughter", "son", "cousin", "colleague", "roommate", "grandmother", "uncle", "aunt",
)  # fmt: skip
SURNAMES = (
    "Okafor", "Schmidt", "Tanaka", "Rossi", "Kowalski", "Haddad", "Nguyen", "Johansson",
    "Fernandes", "Patel", "Müller", "Dubois", "Andersen", "Moreau", "Kim", "Novak", "Costa",
    "Yilmaz", "Mensah", "Larsen", "Herrera", "Ivanova", "Brennan", "Sato", "Bauer", "Lindqvist",
    "Mendes", "Chen", "Abiodun", "Kaur", "Romano", "Weber", "Silva", "Petrov", "Hoffmann",
    "Eriksen", "Gallagher", "Rahman", "Vargas", "Ito",
)  # fmt: skip
CITIES = (
    "Valencia", "Lisbon", "Porto", "Berlin", "Munich", "Hamburg", "Vienna", "Zurich", "Geneva",
    "Amsterdam", "Rotterdam", "Brussels", "Paris", "Lyon", "Marseille", "Barcelona", "Madrid",
    "Seville", "Milan", "Rome", "Turin", "Naples", "Athens", "Istanbul", "Prague", "Warsaw",
    "Krakow", "Budapest", "Copenhagen", "Stockholm", "Oslo", "Helsinki", "Dublin", "Edinburgh",
    "Manchester", "London", "Bristol", "Toronto", "Montreal", "Vancouver", "Boston", "Chicago",
    "Seattle", "Austin", "Denver", "Portland", "New York", "San Diego", "Mexico City", "Bogota",
    "Lima", "Santiago", "Buenos Aires", "Sao Paulo", "Nairobi", "Lagos", "Accra", "Cape Town",
    "Cairo", "Casablanca", "Dubai", "Mumbai", "Bangalore", "Delhi", "Singapore",
    "Kuala Lumpur", "Bangkok", "Hanoi", "Seoul", "Tokyo", "Osaka", "Taipei", "Hong Kong",
    "Sydney", "Melbourne", "Auckland", "Reykjavik", "Tallinn", "Riga", "Ljubljana", "Zagreb",
    "Bologna", "Florence", "Granada", "Bilbao", "Leipzig", "Gothenburg", "Bergen", "Utrecht",
    "Ghent", "Antwerp", "Lausanne", "Salzburg", "Kyoto", "Jakarta", "Manila", "Doha", "Tbilisi",
)  # fmt: skip
COUNTRIES = (
    "Japan", "Portugal", "Iceland", "Morocco", "Peru", "Vietnam", "Italy", "Greece", "Norway",
    "Kenya", "Mexico", "Chile", "New Zealand", "Croatia", "Scotland", "Thailand", "Canada",
    "Turkey", "Georgia", "Sri Lanka", "Argentina", "Indonesia", "Ireland", "Spain",
    "South Korea", "Jordan", "Tanzania", "Colombia", "Finland", "Austria", "Slovenia", "Egypt",
    "India", "Nepal", "Costa Rica", "Malta", "Estonia", "Switzerland", "Denmark", "Poland",
    "Hungary", "Brazil", "Australia", "Namibia", "Oman", "Laos", "Cambodia", "Ecuador",
    "Albania", "Uruguay",
)  # fmt: skip
COMPANIES = (
    "Shopify", "Stripe", "Google", "Microsoft", "Spotify", "Airbnb", "Siemens", "SAP",
    "Zalando", "Booking.com", "Adyen", "Philips", "IKEA", "Volvo", "Ericsson", "Nokia",
    "Unilever", "Nestle", "Novartis", "Roche", "Accenture", "Deloitte", "McKinsey", "Amazon",
    "Netflix", "Atlassian", "Canva", "Salesforce", "Oracle", "IBM", "Intel", "Nvidia", "Tesla",
    "Bosch", "BMW", "Airbus", "Lufthansa", "Klarna", "Revolut", "Monzo", "Wise", "DeepMind",
    "Mozilla", "GitLab", "Datadog", "Snowflake", "Databricks", "Figma", "Notion", "Zoom",
    "Uber", "Deliveroo", "Etsy", "Pinterest", "Dropbox", "Twilio", "Cloudflare", "HubSpot",
    "Intercom", "Personio", "Celonis", "Miro", "Ubisoft", "Nintendo", "Sony", "Samsung",
    "Toyota", "the city hospital", "a small bakery", "a design studio", "a law firm",
    "the public library", "a primary school", "the university", "a climate startup",
    "a logistics company", "the local council", "a veterinary clinic",
)  # fmt: skip
ROLES = (
    "a nurse", "a software engineer", "a product manager", "a data scientist", "a teacher",
    "an accountant", "a graphic designer", "an architect", "a pharmacist", "a physiotherapist",
    "a lawyer", "a chef", "a barista", "a UX researcher", "a marketing lead", "a sales manager",
    "a project manager", "an HR partner", "a civil engineer", "an electrician", "a journalist",
    "a photographer", "a translator", "a dentist", "a paramedic", "a researcher",
    "a lab technician", "an analyst", "a consultant", "a recruiter", "a copywriter",
    "a social worker", "a veterinarian", "a pilot", "a flight attendant", "a mechanic",
    "a carpenter", "a librarian", "a DevOps engineer", "a security engineer", "a QA engineer",
    "a customer success manager", "an operations manager", "a finance director",
    "a head of design", "a tech lead", "an engineering manager", "a support agent",
    "an illustrator", "a midwife",
)  # fmt: skip
TEAMS = (
    "platform", "payments", "growth", "data", "mobile", "design", "infrastructure", "sales",
    "finance", "marketing", "research", "support", "security", "search", "logistics",
)  # fmt: skip
PROJECTS = (
    "the billing migration", "the mobile app redesign", "the data platform",
    "the search rewrite", "the onboarding flow", "the autumn launch", "the payments API",
    "the customer portal", "the recommendation engine", "the warehouse automation",
    "the forecasting model", "the new website", "the security audit",
    "the analytics dashboard", "the API gateway", "the cloud migration", "the pricing page",
    "the accessibility review", "the partner integration", "the hiring plan",
)  # fmt: skip
ARRANGEMENTS = (
    "works from home on Mondays and Fridays", "is fully remote", "goes to the office every day",
    "works a four-day week", "works night shifts", "works part-time", "works compressed hours",
    "works from a co-working space", "splits the week between home and the office",
    "works early shifts that start at 6 am",
)  # fmt: skip
COMMUTES = (
    "by bike", "by train", "by bus", "by car", "on foot", "by tram", "by e-scooter",
    "by ferry", "by metro", "in a carpool with two colleagues",
)  # fmt: skip
DISHES = (
    "ramen", "pad thai", "paella", "sushi", "tacos al pastor", "pho", "bibimbap", "shakshuka",
    "falafel", "biryani", "moussaka", "pierogi", "goulash", "lasagna", "mushroom risotto",
    "ceviche", "empanadas", "dumplings", "butter chicken", "laksa", "bao buns", "tiramisu",
    "cheesecake", "green curry", "katsu curry", "poke bowls", "gnocchi", "fish and chips",
    "jollof rice", "injera", "lamb tagine", "dal makhani", "carbonara", "okonomiyaki",
    "tteokbokki", "banh mi", "arepas", "gyoza", "churros", "baklava", "kimchi stew", "mole",
    "pupusas", "schnitzel", "bouillabaisse", "gazpacho", "masala dosa", "hummus",
    "pastel de nata", "khachapuri", "udon", "chili con carne", "pesto pasta", "lentil soup",
)  # fmt: skip
DIETS = (
    "vegetarian", "vegan", "pescatarian", "gluten-free", "dairy-free", "low-carb",
    "low-sodium", "sugar-free", "plant-based", "Mediterranean", "high-protein", "low-FODMAP",
)  # fmt: skip
RESTAURANTS = (
    "Casa Lola", "The Green Fork", "Sakura Ramen", "Trattoria Nonna", "Little Saigon",
    "Blue Door Bistro", "Spice Route", "El Farolito", "Golden Lotus", "Pasta Fresca",
    "The Copper Pot", "Taverna Kriti", "Seoul Kitchen", "Bombay Brasserie", "Le Petit Zinc",
    "Mama Africa", "Burger Lab", "Noodle Bar 88", "The Olive Tree", "Fika Cafe",
    "Taqueria Luna", "Pho Hanoi", "Dim Sum Palace", "Beirut Grill", "Bodega 12",
    "The Salt Cellar", "Curry Leaf", "Harbour Fish House", "Ember and Oak", "Verde",
    "Kimchi House", "Cafe Central", "Oaxaca Cantina", "Nordic Table", "Piccolo",
    "Sunrise Diner", "Lotus Garden", "The Tin Kettle", "Marrakech Nights", "Osteria Rosa",
)  # fmt: skip
REACTIONS = (
    "loved it", "thought it was too salty", "wants to go back soon", "found it overpriced",
    "said it was the best in town", "was disappointed", "is still talking about it",
    "recommends the terrace", "had to wait an hour for a table", "thought the portions were tiny",
)  # fmt: skip
COFFEES = (
    "a flat white", "an oat latte", "a double espresso", "a cortado",
    "a cappuccino with oat milk", "a cold brew", "black filter coffee", "a chai latte",
    "a matcha latte", "a decaf americano", "a mocha", "a macchiato", "green tea",
    "an iced americano",
)  # fmt: skip
PET_KINDS = (
    "dog", "cat", "rabbit", "parrot", "hamster", "tortoise", "guinea pig", "golden retriever",
    "beagle", "border collie", "tabby cat", "Siamese cat", "dachshund", "corgi", "labrador",
    "greyhound", "ferret", "budgie", "husky", "Maine Coon",
)  # fmt: skip
PET_NAMES = (
    "Biscuit", "Luna", "Max", "Pepper", "Mochi", "Nala", "Ziggy", "Bella", "Simba", "Cleo",
    "Rocky", "Maple", "Olive", "Milo", "Pixel", "Noodle", "Juniper", "Ginger", "Coco", "Loki",
    "Willow", "Toffee", "Pumpkin", "Hazel", "Charlie", "Poppy", "Basil", "Kiwi", "Tofu",
    "Daisy", "Waffles", "Zeus", "Mango", "Frida", "Sasha", "Shadow", "Peanut", "Bean", "Ruby",
    "Otis", "Clementine", "Archie", "Lola", "Nemo", "Pretzel", "Sprout", "Ollie", "Button",
)  # fmt: skip
PET_ISSUES = (
    "a limp", "an ear infection", "a skin rash", "the yearly vaccinations",
    "a dental check-up", "an upset stomach", "a swollen paw", "a persistent cough",
    "weight loss", "a torn claw",
)  # fmt: skip
TRICKS = (
    "sit on command", "give a paw", "roll over", "ring a bell to go outside", "play dead",
    "fetch the newspaper", "walk on a lead without pulling", "come back when called",
    "open the back door", "wave hello",
)  # fmt: skip
CONDITIONS = (
    "asthma", "migraines", "a knee injury", "lower back pain", "high blood pressure",
    "hay fever", "a sprained ankle", "tennis elbow", "insomnia", "anaemia",
    "a shoulder injury", "eczema", "type 2 diabetes", "a broken wrist", "a pinched nerve",
    "long covid", "a stress fracture", "vertigo",
)  # fmt: skip
MEDICATIONS = (
    "ibuprofen", "an asthma inhaler", "antihistamines", "vitamin D", "iron supplements",
    "blood pressure tablets", "metformin", "magnesium", "omega-3 capsules", "melatonin",
    "a steroid cream", "folic acid",
)  # fmt: skip
ALLERGENS = (
    "peanuts", "shellfish", "penicillin", "cats", "pollen", "dust mites", "gluten", "eggs",
    "sesame", "bee stings", "latex", "tree nuts", "lactose", "kiwi fruit",
)  # fmt: skip
APPOINTMENTS = (
    "dentist", "physio", "eye test", "blood test", "dermatology", "cardiology", "therapy",
    "vaccination", "annual check-up", "hearing test", "orthopaedic", "nutritionist",
)  # fmt: skip
RACES = (
    "half marathon", "marathon", "10k run", "triathlon", "charity bike ride", "trail race",
    "5k fun run", "open-water swim", "duathlon", "mountain ultramarathon",
)  # fmt: skip
SEATS = ("window", "aisle", "exit-row", "front-row", "bulkhead")
OCCASIONS = (
    "a wedding", "a friend's birthday", "a job interview", "a conference", "a funeral",
    "a graduation", "a family reunion", "a football match", "a concert", "a long weekend",
)  # fmt: skip
SPORTS = (
    "plays padel", "goes climbing", "swims", "does pilates", "goes running", "rows",
    "plays volleyball", "does judo", "goes cycling", "plays badminton", "goes surfing",
    "does kickboxing", "plays table tennis", "goes salsa dancing", "does yoga",
    "plays five-a-side football", "goes bouldering", "plays tennis", "does CrossFit",
    "plays basketball",
)  # fmt: skip
INSTRUMENTS = (
    "piano", "guitar", "cello", "violin", "drums", "saxophone", "ukulele", "flute",
    "bass guitar", "trumpet", "harp", "accordion", "clarinet", "banjo", "mandolin",
)  # fmt: skip
BOOKS = (
    "The Overstory", "Project Hail Mary", "Educated", "Sapiens", "Circe",
    "The Midnight Library", "Klara and the Sun", "Dune", "Atomic Habits",
    "The Remains of the Day", "Pachinko", "Normal People", "The Three-Body Problem",
    "Piranesi", "A Little Life", "Thinking, Fast and Slow", "The Name of the Wind",
    "Station Eleven", "Middlemarch", "Beloved", "The Left Hand of Darkness",
    "Never Let Me Go", "The Goldfinch", "Born a Crime", "The Road", "Anna Karenina",
    "Lessons in Chemistry", "The Hobbit", "Braiding Sweetgrass", "Shantaram",
    "The Kite Runner", "Pride and Prejudice", "Hyperion", "The Secret History",
    "Demon Copperhead", "The Vanishing Half", "Cloud Atlas", "Invisible Cities",
    "The Shadow of the Wind", "Tomorrow, and Tomorrow, and Tomorrow",
)  # fmt: skip
ARTISTS = (
    "Radiohead", "Fleetwood Mac", "Billie Eilish", "Arctic Monkeys", "Beyoncé", "Coldplay",
    "Rosalía", "Kendrick Lamar", "Taylor Swift", "Bon Iver", "Florence and the Machine",
    "Khruangbin", "Tame Impala", "Massive Attack", "Adele", "Burna Boy", "Fontaines D.C.",
    "The National", "Björk", "Hozier", "Little Simz", "Phoebe Bridgers", "Vampire Weekend",
    "Sigur Rós", "the Berlin Philharmonic", "Nick Cave", "Lizzo", "Angélique Kidjo",
    "Nils Frahm", "Anoushka Shankar",
)  # fmt: skip
HOBBIES = (
    "pottery", "knitting", "watercolour painting", "birdwatching", "film photography",
    "gardening", "woodworking", "baking sourdough", "sailing", "calligraphy", "chess",
    "beekeeping", "rock climbing", "bookbinding", "embroidery", "astronomy", "foraging",
    "home brewing", "stand-up comedy", "salsa dancing",
)  # fmt: skip
PHONES = (
    "an iPhone 15", "a Pixel 8", "a Galaxy S24", "a Fairphone 5", "a OnePlus 12",
    "an iPhone 13 mini", "a Pixel 7a", "a Nothing Phone", "a Galaxy A54", "an iPhone SE",
    "a Xiaomi 13", "a Moto G",
)  # fmt: skip
LAPTOPS = (
    "a MacBook Air", "a ThinkPad X1 Carbon", "a Dell XPS 13", "a Framework laptop",
    "a Surface Laptop", "a MacBook Pro", "an HP EliteBook", "an ASUS Zenbook",
    "a Chromebook", "a Lenovo Yoga",
)  # fmt: skip
SYSTEMS = ("Ubuntu", "Fedora", "macOS", "Windows 11", "Debian", "Arch Linux", "ChromeOS")
LANGUAGES = (
    "Rust", "Go", "Python", "TypeScript", "Kotlin", "Elixir", "Haskell", "Swift", "Julia",
    "Scala", "OCaml", "Zig", "C#", "Ruby", "Clojure",
)  # fmt: skip
PURPOSES = (
    "build a side project", "automate reports at work", "contribute to open source",
    "prepare for job interviews", "write a small game", "analyse running data",
    "build a budgeting app", "teach a coding club",
)  # fmt: skip
GADGET_PROBLEMS = (
    "stopped charging", "has a cracked screen", "keeps overheating", "lost all its photos",
    "will not connect to the wifi", "got soaked in the rain", "froze during an update",
    "has a dead battery",
)  # fmt: skip
BANKS = (
    "ING", "Monzo", "Revolut", "N26", "HSBC", "Barclays", "Santander", "BBVA",
    "Deutsche Bank", "Chase", "Nubank", "Rabobank", "ABN AMRO", "Nordea", "Danske Bank",
    "UniCredit", "bunq", "Starling", "a local credit union", "Triodos",
)  # fmt: skip
GOALS = (
    "a new car", "a house deposit", "a wedding", "a new laptop", "an emergency fund",
    "a sabbatical", "a kitchen renovation", "a round-the-world trip", "early retirement",
    "a master's degree", "a new bike", "solar panels",
)  # fmt: skip
PURCHASES = (
    "a new sofa", "concert tickets", "a road bike", "a standing desk", "winter tyres",
    "a coffee machine", "running shoes", "a tent", "a washing machine", "a tattoo",
    "a pair of glasses", "a language course", "a gym membership", "a camera lens",
)  # fmt: skip
EVENTS = (
    "team standup", "piano lesson", "therapy session", "book club", "Spanish class",
    "yoga class", "one-on-one with the manager", "climbing session", "choir rehearsal",
    "date night", "family video call", "swimming practice", "pottery class",
    "volunteering shift", "football training", "chess club",
)  # fmt: skip
DOCUMENTS = (
    "the tax return", "the grant proposal", "the quarterly report", "the visa application",
    "the thesis draft", "the insurance claim", "the mortgage paperwork",
    "the conference paper", "the performance review", "the planning application",
)  # fmt: skip
TASKS = (
    "renew the car insurance", "call the landlord", "book the flights", "water the plants",
    "pay the electricity bill", "pick up the dry cleaning", "send the birthday card",
    "cancel the streaming subscription", "back up the laptop", "order more printer ink",
    "book a haircut", "return the library books",
)  # fmt: skip
HOLIDAYS = (
    "Easter weekend", "summer holidays", "Christmas break", "long weekend", "half-term break",
    "New Year", "autumn break",
)  # fmt: skip
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
TIMES = (
    "7 am", "7:30 am", "8 am", "8:15 am", "9 am", "9:30 am", "10 am", "11:45 am", "noon",
    "12:30 pm", "1 pm", "2:30 pm", "3 pm", "4:15 pm", "5 pm", "5:30 pm", "6 pm", "6:45 pm",
    "7 pm", "8 pm", "8:30 pm",
)  # fmt: skip
PARTS_OF_DAY = ("morning", "evening", "lunchtime", "night")
CURRENCIES = ("€", "$", "£")
ORDINALS = ("first", "fifth", "tenth", "fifteenth", "twentieth", "twenty-fifth", "thirtieth")


def _amount(rng: random.Random) -> str:
    value = rng.choice((25, 40, 60, 80, 120, 150, 200, 250, 300, 450, 600, 750, 900))
    value *= rng.choice((1, 1, 2, 5, 10))
    return f"{rng.choice(CURRENCIES)}{value:,}"


#: How each slot a template names is drawn.
_SLOTS: dict[str, Any] = {
    "name2": NAMES,
    "surname": SURNAMES,
    "city": CITIES,
    "country": COUNTRIES,
    "company": COMPANIES,
    "role": ROLES,
    "team": TEAMS,
    "project": PROJECTS,
    "arrangement": ARRANGEMENTS,
    "commute": COMMUTES,
    "dish": DISHES,
    "diet": DIETS,
    "restaurant": RESTAURANTS,
    "reaction": REACTIONS,
    "coffee": COFFEES,
    "pet_kind": PET_KINDS,
    "pet_name": PET_NAMES,
    "pet_issue": PET_ISSUES,
    "trick": TRICKS,
    "condition": CONDITIONS,
    "medication": MEDICATIONS,
    "allergen": ALLERGENS,
    "appointment": APPOINTMENTS,
    "race": RACES,
    "seat": SEATS,
    "occasion": OCCASIONS,
    "sport": SPORTS,
    "instrument": INSTRUMENTS,
    "book": BOOKS,
    "artist": ARTISTS,
    "hobby": HOBBIES,
    "phone": PHONES,
    "laptop": LAPTOPS,
    "system": SYSTEMS,
    "language": LANGUAGES,
    "purpose": PURPOSES,
    "problem": GADGET_PROBLEMS,
    "bank": BANKS,
    "goal": GOALS,
    "purchase": PURCHASES,
    "event": EVENTS,
    "document": DOCUMENTS,
    "task": TASKS,
    "holiday": HOLIDAYS,
    "month": MONTHS,
    "weekday": WEEKDAYS,
    "time": TIMES,
    "part": PARTS_OF_DAY,
    "ordinal": ORDINALS,
    "year": tuple(str(y) for y in range(2012, 2026)),
    "day": tuple(str(d) for d in range(1, 29)),
    "years": tuple(str(n) for n in range(2, 16)),
    "guests": tuple(str(n) for n in range(4, 21)),
    "weeks": ("two", "three", "four", "five", "six"),
    "amount": _amount,
}


# --- attributes -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Attribute:
    """One kind of fact about a subject.

    A *stateful* attribute (``key_slot`` set) holds one value per subject at a time (where one
    works, lives, banks); a later fact about it is an update. ``fixed`` slots belong to the key
    and stay the same across versions (which weekly event moved). Attributes without a
    ``key_slot`` are events, of which a subject can have any number.
    """

    name: str
    topic: str
    templates: tuple[str, ...]
    questions: tuple[str, ...]
    key_slot: str | None = None
    fixed: tuple[str, ...] = ()
    updates: tuple[str, ...] = ()
    weight: int = 2


_A = _Attribute
ATTRIBUTES: tuple[_Attribute, ...] = (
    # work
    _A(
        "employer",
        "work",
        key_slot="company",
        templates=(
            "{S} works at {company} as {role}.",
            "{S} has been {role} at {company} since {year}.",
            "{S} started a new job at {company} as {role} in {month}.",
            "{S} is {role} at {company}.",
            "{S} joined {company} in {month} {year} and works as {role} on the {team} team.",
        ),
        updates=(
            "{S} now works at {company} as {role}.",
            "{S} left {old_company} and joined {company} in {month}.",
            "{S} no longer works at {old_company}; the new job is at {company}.",
            "{S} moved from {old_company} to {company} to work as {role}.",
        ),
        questions=(
            "Where does {s} work?",
            "Which company does {s} work for?",
            "What does {s} do for a living?",
            "Who is {s_pos} employer?",
        ),
        weight=4,
    ),
    _A(
        "manager",
        "work",
        key_slot="name2",
        templates=(
            "{S} reports to {name2} on the {team} team.",
            "{S_pos} manager at work is {name2}.",
            "{S} has weekly one-on-ones with their manager {name2}.",
        ),
        updates=(
            "{S} has a new manager: {name2} took over from {old_name2} in {month}.",
            "{S} now reports to {name2} instead of {old_name2}.",
        ),
        questions=("Who is {s_pos} manager?", "Who does {s} report to at work?"),
    ),
    _A(
        "project",
        "work",
        key_slot="project",
        templates=(
            "{S} is leading {project} this quarter.",
            "{S} is working on {project} with the {team} team.",
            "{S} spends most of the week on {project}.",
        ),
        updates=(
            "{S} moved off {old_project} and is now working on {project}.",
            "{S} handed over {old_project} and took charge of {project} in {month}.",
        ),
        questions=("What project is {s} working on?", "What is {s} leading at work?"),
    ),
    _A(
        "arrangement",
        "work",
        key_slot="arrangement",
        templates=("{S} {arrangement}.", "Since {month}, {S} {arrangement}."),
        updates=("{S} {arrangement} now.", "From {month} on, {S} {arrangement}."),
        questions=("What is {s_pos} work schedule?", "Does {s} work from home?"),
        weight=1,
    ),
    _A(
        "commute",
        "work",
        key_slot="commute",
        templates=(
            "{S} commutes to work {commute}.",
            "{S} gets to the office {commute}; it takes about {guests} minutes.",
        ),
        updates=(
            "{S} now commutes {commute} instead of {old_commute}.",
            "{S} stopped commuting {old_commute} and goes {commute} since {month}.",
        ),
        questions=("How does {s} get to work?", "How does {s} commute?"),
        weight=1,
    ),
    _A(
        "talk",
        "work",
        templates=(
            "{S} gave a talk about {project} at a conference in {city} in {month}.",
            "{S} spoke about {project} at a meetup in {city}.",
        ),
        questions=(
            "Where did {s} give a talk about {project}?",
            "What did {s} talk about in {city}?",
        ),
        weight=1,
    ),
    _A(
        "board",
        "work",
        templates=(
            "{S} is presenting {project} to the board on {weekday}.",
            "{S} has to pitch {project} to the leadership team in {month}.",
        ),
        questions=("What is {s} presenting to the board?", "When is {s} presenting {project}?"),
        weight=1,
    ),
    _A(
        "promotion",
        "work",
        templates=(
            "{S} got promoted to {role} at {company} in {month} {year}.",
            "{S} was promoted to {role} after {years} years at {company}.",
        ),
        questions=("When did {s} get promoted?", "What was {s} promoted to?"),
        weight=1,
    ),
    _A(
        "work_trip",
        "work",
        templates=(
            "{S} is travelling to {city} for work on {weekday} and back on {weekday2}.",
            "{S} has a client visit in {city} in the first week of {month}.",
        ),
        questions=("When is {s} travelling to {city}?", "Where is {s} going for work?"),
        weight=1,
    ),
    # family and home
    _A(
        "home",
        "family",
        key_slot="city",
        templates=(
            "{S} lives in {city}.",
            "{S} moved to {city} in {month} to work as {role}.",
            "{S} has lived in {city} for {years} years.",
            "{S} rents a flat in {city} near the city centre.",
            "{S} bought a house on the outskirts of {city} in {year}.",
        ),
        updates=(
            "{S} moved from {old_city} to {city} in {month}.",
            "{S} now lives in {city}.",
            "{S} relocated to {city} to work as {role}.",
            "{S} left {old_city} and settled in {city} in {month} {year}.",
        ),
        questions=(
            "Where does {s} live?",
            "Which city is {s} based in?",
            "Where did {s} move to?",
        ),
        weight=4,
    ),
    _A(
        "partner",
        "family",
        key_slot="name2",
        templates=(
            "{S} is married to {name2}.",
            "{S} has been dating {name2} since {month}.",
            "{S} got engaged to {name2} in {month} {year}.",
        ),
        updates=(
            "{S} split up with {old_name2} and is now seeing {name2}.",
            "{S} is now in a relationship with {name2}.",
        ),
        questions=("Who is {s} dating?", "Who is {s_pos} partner?"),
    ),
    _A(
        "birthday",
        "family",
        key_slot="day",
        templates=(
            "{S_pos} birthday is on {month} {day}.",
            "{S} was born on {month} {day}, {year}.",
        ),
        questions=("When is {s_pos} birthday?", "When was {s} born?"),
        weight=1,
    ),
    _A(
        "anniversary",
        "family",
        templates=(
            "{S} celebrated their {ordinal} wedding anniversary in {city}.",
            "{S} is planning a surprise for their {ordinal} wedding anniversary in {month}.",
        ),
        questions=(
            "Where did {s} celebrate their anniversary?",
            "Which anniversary is {s} celebrating?",
        ),
        weight=1,
    ),
    _A(
        "visit",
        "family",
        templates=(
            "{S} is visiting {name2} in {city} over the {holiday}.",
            "{S} spent the {holiday} with {name2} in {city}.",
        ),
        questions=(
            "Who is {s} visiting over the {holiday}?",
            "Where is {s} spending the {holiday}?",
        ),
        weight=1,
    ),
    _A(
        "family_dinner",
        "family",
        templates=(
            "{S} is hosting a family dinner for {guests} people on {weekday}.",
            "{S} invited {guests} relatives for lunch on {month} {day}.",
        ),
        questions=("When is {s} hosting a family dinner?", "How many people is {s} hosting?"),
        weight=1,
    ),
    _A(
        "new_baby",
        "family",
        templates=(
            "{S} became a grandparent in {month} {year}.",
            "{S} is expecting a baby in {month}.",
        ),
        questions=("When is {s_pos} baby due?", "Did {s} become a grandparent?"),
        weight=1,
    ),
    _A(
        "moving_help",
        "family",
        templates=(
            "{S} is helping {name2} move house on {weekday}.",
            "{S} lent {name2} a van to move to {city}.",
        ),
        questions=("Who is {s} helping to move?", "Who did {s} lend a van to?"),
        weight=1,
    ),
    # pets
    _A(
        "pet",
        "pets",
        key_slot="pet_name",
        fixed=("pet_kind",),
        templates=(
            "{S} has a {pet_kind} named {pet_name}.",
            "{S} adopted a {pet_kind} called {pet_name} in {month}.",
            "{S_pos} {pet_kind} {pet_name} is {years} years old.",
        ),
        updates=(
            "{S} adopted a new {pet_kind} called {pet_name} after {old_pet_name} passed away.",
            "{S_pos} {pet_kind} is now called {pet_name}; the kids renamed {old_pet_name}.",
        ),
        questions=(
            "What is the name of {s_pos} {pet_kind}?",
            "What pet does {s} have?",
        ),
        weight=3,
    ),
    _A(
        "vet",
        "pets",
        templates=(
            "{S} took their {pet_kind} to the vet in {city} because of {pet_issue}.",
            "{S_pos} {pet_kind} {pet_name} needs to see the vet on {weekday} about {pet_issue}.",
        ),
        questions=(
            "Why did {s} take their {pet_kind} to the vet?",
            "When is {pet_name} seeing the vet?",
        ),
        weight=1,
    ),
    _A(
        "trick",
        "pets",
        templates=(
            "{S_pos} {pet_kind} {pet_name} learned to {trick} in {month}.",
            "{S} is teaching {pet_name} the {pet_kind} to {trick}.",
        ),
        questions=("What trick did {s_pos} {pet_kind} learn?", "What is {s} teaching {pet_name}?"),
        weight=1,
    ),
    _A(
        "pet_sitter",
        "pets",
        templates=(
            "{S} is looking for someone to feed {pet_name} while away in {month}.",
            "{name2} will look after {S_pos} {pet_kind} {pet_name} in {month}.",
        ),
        questions=(
            "Who will look after {s_pos} pet in {month}?",
            "Who is feeding {pet_name} in {month}?",
        ),
        weight=1,
    ),
    # health
    _A(
        "doctor",
        "health",
        key_slot="surname",
        templates=(
            "{S_pos} GP is Dr. {surname} in {city}.",
            "{S} sees Dr. {surname} about {condition}.",
        ),
        updates=(
            "{S} switched to a new GP, Dr. {surname}, after Dr. {old_surname} retired.",
            "{S_pos} doctor is now Dr. {surname}.",
        ),
        questions=("Who is {s_pos} doctor?", "Which GP does {s} see?"),
        weight=1,
    ),
    _A(
        "condition",
        "health",
        templates=(
            "{S} has been dealing with {condition} since {month}.",
            "{S} was diagnosed with {condition} in {year}.",
            "{S} is recovering from {condition} and skipping sport until {month}.",
        ),
        questions=("What health issue does {s} have?", "What is {s} recovering from?"),
        weight=2,
    ),
    _A(
        "appointment",
        "health",
        templates=(
            "{S} has a {appointment} appointment on {weekday} at {time}.",
            "{S_pos} next {appointment} appointment is on {month} {day}.",
        ),
        questions=(
            "When is {s_pos} {appointment} appointment?",
            "What appointments does {s} have?",
        ),
        weight=2,
    ),
    _A(
        "medication",
        "health",
        key_slot="medication",
        templates=(
            "{S} takes {medication} every {part}.",
            "{S} was prescribed {medication} in {month}.",
        ),
        updates=(
            "{S} stopped taking {old_medication} and now takes {medication}.",
            "{S_pos} doctor switched the prescription to {medication}.",
        ),
        questions=("What medication does {s} take?", "What was {s} prescribed?"),
        weight=1,
    ),
    _A(
        "allergy",
        "health",
        key_slot="allergen",
        templates=("{S} is allergic to {allergen}.", "{S} has a severe allergy to {allergen}."),
        questions=("What is {s} allergic to?", "Does {s} have any allergies?"),
        weight=1,
    ),
    _A(
        "race",
        "health",
        key_slot="race",
        templates=(
            "{S} is training for a {race} in {city} in {month}.",
            "{S} signed up for the {city} {race} in {month}.",
        ),
        updates=(
            "{S} switched from the {old_race} to a {race} in {city}.",
            "{S} is now training for a {race} instead of the {old_race}.",
        ),
        questions=("What race is {s} training for?", "Which race did {s} sign up for?"),
        weight=1,
    ),
    # travel
    _A(
        "trip",
        "travel",
        templates=(
            "{S} spent {weeks} weeks in {country} in {month} {year}.",
            "{S} is planning a trip to {country} in {month}.",
            "{S} flew to {city} for {occasion} in {month}.",
            "{S} went backpacking in {country} with {name2} after graduating.",
            "{S} is going to {country} over the {holiday} with {name2}.",
        ),
        questions=(
            "When did {s} go to {country}?",
            "Where is {s} travelling in {month}?",
            "Why did {s} fly to {city}?",
            "Who is {s} travelling with?",
        ),
        weight=4,
    ),
    _A(
        "seat",
        "travel",
        key_slot="seat",
        templates=(
            "{S} always books {seat} seats on long flights.",
            "{S} prefers {seat} seats when flying.",
        ),
        updates=("{S} now prefers {seat} seats instead of {old_seat} seats.",),
        questions=("Which seat does {s} prefer on flights?",),
        weight=1,
    ),
    _A(
        "passport",
        "travel",
        key_slot="year",
        templates=("{S_pos} passport expires in {month} {year}.",),
        updates=("{S} renewed their passport; it now expires in {month} {year}.",),
        questions=("When does {s_pos} passport expire?",),
        weight=1,
    ),
    # food
    _A(
        "favourite_dish",
        "food",
        key_slot="dish",
        templates=(
            "{S_pos} favourite dish is {dish}.",
            "{S} could eat {dish} every day.",
            "{S} always orders {dish} when eating out.",
        ),
        updates=(
            "{S_pos} new favourite dish is {dish}.",
            "{S} is over {old_dish}; these days it is all about {dish}.",
        ),
        questions=("What is {s_pos} favourite food?", "What does {s} like to eat?"),
        weight=2,
    ),
    _A(
        "diet",
        "food",
        key_slot="diet",
        templates=("{S} follows a {diet} diet.", "{S} has been eating {diet} since {month}."),
        updates=(
            "{S} switched from a {old_diet} diet to a {diet} one.",
            "{S} is eating {diet} these days.",
        ),
        questions=("What diet does {s} follow?", "Does {s} have dietary restrictions?"),
        weight=2,
    ),
    _A(
        "restaurant",
        "food",
        templates=(
            "{S} had {dish} at {restaurant} in {city} and {reaction}.",
            "{S} recommends the {dish} at {restaurant}.",
            "{S} tried the {dish} at {restaurant} on {weekday} and {reaction}.",
        ),
        questions=("Where did {s} eat {dish}?", "What did {s} think of {restaurant}?"),
        weight=2,
    ),
    _A(
        "booking",
        "food",
        templates=(
            "{S} booked a table at {restaurant} for {weekday} at {time}.",
            "{S} reserved {restaurant} for {guests} people on {month} {day}.",
        ),
        questions=("Which restaurant did {s} book?", "When is {s_pos} dinner reservation?"),
        weight=1,
    ),
    _A(
        "coffee",
        "food",
        key_slot="coffee",
        templates=("{S} always orders {coffee}.", "{S_pos} usual coffee order is {coffee}."),
        updates=("{S} switched to {coffee}.", "{S} drinks {coffee} now instead of {old_coffee}."),
        questions=("What coffee does {s} order?", "How does {s} take their coffee?"),
        weight=1,
    ),
    _A(
        "cooking_lesson",
        "food",
        templates=(
            "{S} learned to cook {dish} from {name2}.",
            "{name2} taught {S} how to make {dish}.",
        ),
        questions=("Who taught {s} to cook {dish}?", "What can {s} cook?"),
        weight=1,
    ),
    _A(
        "dinner_party",
        "food",
        templates=(
            "{S} is making {dish} for {guests} guests on {weekday}.",
            "{S} is cooking {dish} for a dinner party in {month}.",
        ),
        questions=(
            "What is {s} cooking for the guests?",
            "What is {s} making for dinner on {weekday}?",
        ),
        weight=1,
    ),
    # hobbies
    _A(
        "sport",
        "hobbies",
        key_slot="sport",
        templates=(
            "{S} {sport} every {weekday} {part}.",
            "{S} {sport} with {name2} on weekends.",
        ),
        updates=("{S} {sport} every {weekday} now.", "{S} {sport} these days, since {month}."),
        questions=(
            "What sport does {s} do?",
            "What does {s} do to stay fit?",
        ),
        weight=2,
    ),
    _A(
        "instrument",
        "hobbies",
        key_slot="instrument",
        templates=(
            "{S} is learning to play the {instrument}.",
            "{S} has played the {instrument} since childhood.",
        ),
        updates=(
            "{S} stopped {old_instrument} lessons and started learning the {instrument}.",
            "{S} now plays the {instrument} in a local band.",
        ),
        questions=("What instrument does {s} play?", "What instrument is {s} learning?"),
        weight=1,
    ),
    _A(
        "reading",
        "hobbies",
        templates=(
            "{S} just finished reading {book} and recommends it.",
            "{S} is reading {book} for a book club.",
            "{S} gave {name2} a copy of {book} for their birthday.",
        ),
        questions=("What book is {s} reading?", "What book did {s} recommend?"),
        weight=2,
    ),
    _A(
        "concert",
        "hobbies",
        templates=(
            "{S} saw {artist} live in {city} in {month}.",
            "{S} has tickets for {artist} in {city} on {month} {day}.",
        ),
        questions=("Which concert did {s} go to?", "When is {s} seeing {artist}?"),
        weight=2,
    ),
    _A(
        "hobby",
        "hobbies",
        templates=(
            "{S} took up {hobby} in {year}.",
            "{S} joined a {hobby} group that meets on {weekday}s.",
            "{S} spends Sunday afternoons on {hobby}.",
        ),
        questions=("What hobby did {s} take up?", "What does {s} do on {weekday}s?"),
        weight=2,
    ),
    # tech
    _A(
        "phone",
        "tech",
        key_slot="phone",
        templates=("{S} uses {phone}.", "{S} bought {phone} in {month}."),
        updates=(
            "{S} replaced their old phone with {phone}.",
            "{S} has {phone} now; the old one {problem}.",
        ),
        questions=("What phone does {s} use?", "Which phone did {s} buy?"),
        weight=1,
    ),
    _A(
        "laptop",
        "tech",
        key_slot="laptop",
        templates=(
            "{S} works on {laptop} running {system}.",
            "{S_pos} laptop is {laptop} with {system}.",
        ),
        updates=("{S} switched to {laptop} running {system}.",),
        questions=("What laptop does {s} use?", "Which operating system does {s} run?"),
        weight=1,
    ),
    _A(
        "programming",
        "tech",
        key_slot="language",
        templates=(
            "{S} is learning {language} to {purpose}.",
            "{S} writes most of their code in {language}.",
        ),
        updates=(
            "{S} put {old_language} aside and is learning {language} now.",
            "{S} moved their side project from {old_language} to {language}.",
        ),
        questions=(
            "Which programming language is {s} learning?",
            "What language does {s} code in?",
        ),
        weight=1,
    ),
    _A(
        "laptop_trouble",
        "tech",
        templates=(
            "{S_pos} laptop {problem}; the repair is booked for {weekday}.",
            "{S_pos} work laptop {problem}, so IT is sending a new one.",
        ),
        questions=("What happened to {s_pos} laptop?", "Why does {s_pos} laptop need a repair?"),
        weight=1,
    ),
    _A(
        "phone_trouble",
        "tech",
        templates=(
            "{S_pos} phone {problem} during the trip to {country}.",
            "{S_pos} phone {problem} after only {weeks} weeks.",
        ),
        questions=("What went wrong with {s_pos} phone?", "What happened to {s_pos} phone?"),
        weight=1,
    ),
    # finance
    _A(
        "bank",
        "finance",
        key_slot="bank",
        templates=("{S} banks with {bank}.", "{S} has a joint account at {bank} with {name2}."),
        updates=(
            "{S} moved their savings from {old_bank} to {bank}.",
            "{S} closed the {old_bank} account and banks with {bank} now.",
        ),
        questions=("Which bank does {s} use?", "Where does {s} keep their savings?"),
        weight=1,
    ),
    _A(
        "rent",
        "finance",
        key_slot="amount",
        templates=(
            "{S} pays {amount} a month in rent.",
            "{S_pos} rent is {amount} a month, bills included.",
        ),
        updates=(
            "{S_pos} rent went up to {amount} a month in {month}.",
            "{S} now pays {amount} a month in rent.",
        ),
        questions=("How much rent does {s} pay?", "What is {s_pos} monthly rent?"),
        weight=1,
    ),
    _A(
        "savings",
        "finance",
        key_slot="goal",
        templates=(
            "{S} is saving {amount} a month for {goal}.",
            "{S} opened a savings account for {goal} in {month}.",
        ),
        updates=(
            "{S} is now saving for {goal} instead of {old_goal}.",
            "{S} reached the goal for {old_goal} and is saving for {goal} next.",
        ),
        questions=("What is {s} saving for?", "What goal is {s} saving money for?"),
        weight=1,
    ),
    _A(
        "purchase",
        "finance",
        templates=(
            "{S} spent {amount} on {purchase} in {month}.",
            "{S} paid {amount} for {purchase} last {weekday}.",
        ),
        questions=("How much did {s} spend on {purchase}?", "What did {s} buy in {month}?"),
        weight=1,
    ),
    _A(
        "shared_cost",
        "finance",
        templates=(
            "{S} is splitting the cost of {purchase} with {name2}.",
            "{S} owes {name2} {amount} for {purchase}.",
        ),
        questions=("Who is {s} splitting the cost with?", "How much does {s} owe {name2}?"),
        weight=1,
    ),
    # schedules
    _A(
        "schedule",
        "schedules",
        key_slot="weekday",
        fixed=("event",),
        templates=(
            "{S_pos} {event} is every {weekday} at {time}.",
            "{S_pos} weekly {event} is on {weekday}s at {time}.",
        ),
        updates=(
            "{S_pos} {event} moved to {weekday}s at {time}.",
            "{S} rescheduled the {event} from {old_weekday} to {weekday} at {time}.",
        ),
        questions=("When is {s_pos} {event}?", "What day is {s_pos} {event}?"),
        weight=3,
    ),
    _A(
        "deadline",
        "schedules",
        templates=(
            "{S} has to submit {document} by {month} {day}.",
            "{S} is behind on {document}, which is due on {weekday}.",
        ),
        questions=("When is {s_pos} {document} due?", "What deadline does {s} have?"),
        weight=2,
    ),
    _A(
        "reminder",
        "schedules",
        templates=(
            "{S} asked to be reminded to {task} on {weekday}.",
            "{S} needs to {task} before {month} {day}.",
        ),
        questions=("What does {s} need to be reminded about?", "What does {s} need to do?"),
        weight=2,
    ),
)

TOPICS: tuple[str, ...] = tuple(dict.fromkeys(a.topic for a in ATTRIBUTES))
_BY_NAME = {a.name: a for a in ATTRIBUTES}
_WEIGHTS = [a.weight for a in ATTRIBUTES]


# --- results --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SyntheticFact:
    """One generated fact. ``updates`` is the index of the fact it replaces, or None."""

    index: int
    text: str
    topic: str
    attribute: str
    subject: str
    slots: Mapping[str, str]
    updates: int | None = None

    @property
    def is_update(self) -> bool:
        return self.updates is not None


@dataclass(frozen=True)
class SyntheticMessage:
    """One chat message; :meth:`as_message` gives the mapping :meth:`Memory.ingest` takes."""

    content: str
    role: str
    speaker: str
    session_id: str
    external_id: str
    occurred_at: datetime

    def as_message(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "role": self.role,
            "speaker": self.speaker,
            "session_id": self.session_id,
            "external_id": self.external_id,
            "occurred_at": self.occurred_at,
        }


@dataclass(frozen=True)
class SyntheticQuery:
    """A question about a subject; ``fact_index`` is the newest fact that answers it."""

    text: str
    fact_index: int


# --- generation -----------------------------------------------------------------------------------
def _subject(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    if rng.random() < 0.45:
        return name
    return f"{_possessive(name)} {rng.choice(RELATIONS)}"


def _possessive(subject: str) -> str:
    return subject + ("'" if subject.endswith("s") else "'s")


def _draw(slot: str, rng: random.Random) -> str:
    source = _SLOTS[slot]
    if callable(source):
        return str(source(rng))
    return str(rng.choice(source))


_SUBJECT_FIELDS = frozenset({"S", "s", "S_pos", "s_pos"})


def _fields(template: str) -> tuple[str, ...]:
    """The slots ``template`` names, besides the subject."""
    return tuple(
        name
        for _, name, _, _ in string.Formatter().parse(template)
        if name and name not in _SUBJECT_FIELDS
    )


def _slot_names(attribute: _Attribute) -> tuple[str, ...]:
    names: dict[str, None] = {}
    for template in (*attribute.templates, *attribute.updates, *attribute.questions):
        for name in _fields(template):
            if name == "weekday2":
                name = "weekday"  # drawn with it, as another day
            if not name.startswith("old_"):
                names[name] = None
    return tuple(names)


_ATTRIBUTE_SLOTS = {a.name: _slot_names(a) for a in ATTRIBUTES}


def _fill(attribute: _Attribute, rng: random.Random, keep: Mapping[str, str]) -> dict[str, str]:
    slots = {slot: keep.get(slot) or _draw(slot, rng) for slot in _ATTRIBUTE_SLOTS[attribute.name]}
    if "weekday" in slots:
        slots["weekday2"] = rng.choice([d for d in WEEKDAYS if d != slots["weekday"]])
    return slots


# "a" before a vowel sound becomes "an" (but "a UX researcher", "a one-on-one", "a use").
_ARTICLE = re.compile(r"\b([Aa]) (?=[AEIOUaeiou])(?!U[A-Z]|[Uu]ni|[Uu]s|[Oo]ne|[Ee]u)")


def _render(template: str, subject: str, slots: Mapping[str, str]) -> str:
    values = {**slots, "S": subject, "s": subject}
    values["S_pos"] = values["s_pos"] = _possessive(subject)
    text = _ARTICLE.sub(r"\1n ", template.format_map(values))
    return text[0].upper() + text[1:]


Key = tuple[str, str, tuple[str, ...]]


def _new_fact(
    rng: random.Random, latest: Mapping[Key, int]
) -> tuple[_Attribute, str, dict[str, str], Key | None]:
    """A fresh (attribute, subject, slots); stateful ones only for a subject without one yet."""
    while True:
        attribute = rng.choices(ATTRIBUTES, weights=_WEIGHTS)[0]
        subject = _subject(rng)
        slots = _fill(attribute, rng, {})
        if attribute.key_slot is None:
            return attribute, subject, slots, None
        key = (subject, attribute.name, tuple(slots[s] for s in attribute.fixed))
        if key not in latest:  # one value at a time: draw again rather than contradict
            return attribute, subject, slots, key


def generate_facts(n: int, *, seed: int = 0, update_share: float = 0.1) -> list[SyntheticFact]:
    """``n`` facts, of which about ``update_share`` replace an earlier one.

    The same ``n``, ``seed`` and ``update_share`` always give the same facts, and a longer
    list starts with the shorter one.
    """
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    if not 0.0 <= update_share < 1.0:
        raise ValueError(f"update_share must lie in [0, 1), got {update_share}")
    rng = random.Random(seed)
    facts: list[SyntheticFact] = []
    latest: dict[Key, int] = {}  # (subject, attribute, fixed slots) -> its newest fact
    updatable: list[Key] = []
    while len(facts) < n:
        index = len(facts)
        if updatable and rng.random() < update_share:
            key = rng.choice(updatable)
            old = facts[latest[key]]
            attribute = _BY_NAME[old.attribute]
            assert attribute.key_slot is not None
            slots = _fill(attribute, rng, {slot: old.slots[slot] for slot in attribute.fixed})
            while slots[attribute.key_slot] == old.slots[attribute.key_slot]:
                slots[attribute.key_slot] = _draw(attribute.key_slot, rng)
            values = {**{f"old_{k}": v for k, v in old.slots.items()}, **slots}
            text = _render(rng.choice(attribute.updates), old.subject, values)
            facts.append(
                SyntheticFact(
                    index, text, attribute.topic, attribute.name, old.subject, slots, old.index
                )
            )
            latest[key] = index
            continue
        attribute, subject, slots, new_key = _new_fact(rng, latest)
        if new_key is not None:
            latest[new_key] = index
            if attribute.updates:
                updatable.append(new_key)
        text = _render(rng.choice(attribute.templates), subject, slots)
        facts.append(SyntheticFact(index, text, attribute.topic, attribute.name, subject, slots))
    return facts


def heads(facts: Sequence[SyntheticFact]) -> list[int]:
    """For each fact, the index of the newest fact in its update chain (itself if none)."""
    replaced_by = {f.updates: f.index for f in facts if f.updates is not None}
    result = []
    for fact in facts:
        index = fact.index
        while index in replaced_by:
            index = replaced_by[index]
        result.append(index)
    return result


def _question(rng: random.Random, fact: SyntheticFact) -> str:
    """A question about ``fact`` that names only details its text mentions."""
    questions = _BY_NAME[fact.attribute].questions
    fitting = [q for q in questions if all(fact.slots[name] in fact.text for name in _fields(q))]
    return _render(rng.choice(fitting or list(questions)), fact.subject, fact.slots)


def generate_queries(
    facts: Sequence[SyntheticFact], n: int, *, seed: int = 0
) -> list[SyntheticQuery]:
    """``n`` questions about subjects in ``facts``, each with the newest fact that answers it."""
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    if not facts:
        return []
    rng = random.Random(seed)
    newest = heads(facts)
    queries = []
    for _ in range(n):
        fact = facts[newest[rng.randrange(len(facts))]]
        queries.append(SyntheticQuery(_question(rng, fact), fact.index))
    return queries


# --- chat -----------------------------------------------------------------------------------------
#: The time zone of the generated conversations' timestamps.
CHAT_ZONE = timezone(timedelta(hours=1), "CET")
CHAT_START = datetime(2025, 1, 6, 8, 30, tzinfo=CHAT_ZONE)

_TELL = (
    "{fact}", "Quick update: {fact}", "By the way, {fact_lc}", "Oh, and {fact_lc}",
    "Can you note this down? {fact}", "{fact} Please remember that.", "FYI: {fact}",
    "Something new: {fact}", "Just heard that {fact_lc}",
)  # fmt: skip
_ACK = (
    "Noted, I'll remember that.", "Got it: {fact}", "Thanks, I've saved that.",
    "Okay, I'll keep that in mind.", "Understood. Anything else I should know?",
    "Saved. I'll bring it up when it matters.", "Thanks for the update!",
)  # fmt: skip
_ASK = (
    "{question}",
    "Remind me: {question_lc}",
    "Do you know {question_lc}",
    "Quick one: {question}",
)
_ANSWER = (
    "From what you told me: {fact}", "As far as I know, {fact_lc}",
    "I have this on record: {fact}", "If I remember correctly, {fact_lc}",
)  # fmt: skip
# Facts start with a name (kept capitalised) or one of these words.
_LOWER_AFTER_COMMA = frozenset(
    {"Where", "What", "When", "Who", "Which", "How", "Why", "Does", "Since", "From"}
)


def _lower_first(text: str) -> str:
    """``text`` to follow a comma: names keep their capital, other first words lose it."""
    first = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if first in _LOWER_AFTER_COMMA else text


def generate_messages(n: int, *, seed: int = 0) -> list[SyntheticMessage]:
    """``n`` chat messages in sessions of 4 to 16, alternating user and assistant.

    The user tells the assistant generated facts or asks about earlier ones, and the assistant
    acknowledges or answers. Timestamps increase (seconds to minutes apart within a session,
    hours to days between sessions) and carry the :data:`CHAT_ZONE` offset; session and
    external ids are unique.
    """
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    rng = random.Random(seed)
    facts = generate_facts(n // 2 + 1, seed=seed + 1)
    told: list[SyntheticFact] = []
    messages: list[SyntheticMessage] = []
    now = CHAT_START
    session = 0
    while len(messages) < n:
        session += 1
        session_id = f"chat-{seed}-{session:05d}"
        speaker = rng.choice(NAMES)
        length = rng.randrange(4, 17)
        now += timedelta(hours=rng.randrange(2, 60), minutes=rng.randrange(60))
        fact, asking = facts[0], False
        for turn in range(min(length, n - len(messages))):
            if turn % 2 == 0:
                asking = bool(told) and rng.random() < 0.3
                if asking:
                    fact = rng.choice(told)
                    question = _question(rng, fact)
                    template = rng.choice(_ASK)
                    content = template.format(question=question, question_lc=_lower_first(question))
                else:
                    fact = facts[len(told) % len(facts)]
                    told.append(fact)
                    template = rng.choice(_TELL)
                    content = template.format(fact=fact.text, fact_lc=_lower_first(fact.text))
                role, who = "user", speaker
            else:
                template = rng.choice(_ANSWER if asking else _ACK)
                content = template.format(fact=fact.text, fact_lc=_lower_first(fact.text))
                role, who = "assistant", "assistant"
            now += timedelta(seconds=rng.randrange(15, 240))
            messages.append(
                SyntheticMessage(
                    content=content,
                    role=role,
                    speaker=who,
                    session_id=session_id,
                    external_id=f"{session_id}-m{turn + 1:02d}",
                    occurred_at=now,
                )
            )
    return messages


__all__ = [
    "ATTRIBUTES",
    "CHAT_ZONE",
    "TOPICS",
    "SyntheticFact",
    "SyntheticMessage",
    "SyntheticQuery",
    "generate_facts",
    "generate_messages",
    "generate_queries",
    "heads",
]
