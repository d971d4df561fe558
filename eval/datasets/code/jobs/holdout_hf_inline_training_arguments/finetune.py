"""DistilBERT sentiment fine-tuning; TrainingArguments fixed in code."""
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

MODEL = "distilbert-base-uncased"
tok = AutoTokenizer.from_pretrained(MODEL)
ds = load_dataset("imdb").map(lambda b: tok(b["text"], truncation=True, max_length=256), batched=True)
model = AutoModelForSequenceClassification.from_pretrained(MODEL, num_labels=2)
args = TrainingArguments(output_dir="out", per_device_train_batch_size=16, gradient_accumulation_steps=4,
                         num_train_epochs=2, bf16=True, learning_rate=5e-5, logging_steps=50)
Trainer(model=model, args=args, train_dataset=ds["train"], tokenizer=tok).train()
